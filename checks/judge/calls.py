"""One judge call as the scorer sees it: the request, its retries, structured output.

``ask_judge(judge, messages)`` returns ``(outcome, facts)``: a 2xx ``HttpReply`` whose
body is to be read, or the ``Abstain`` that says why there is none (``unreachable``,
``address_refused``, ``timeout``, ``rate_limited``, ``http_error``, ``reply_too_large``); ``facts`` is what
every detail carries: ``attempts`` (calls made) and ``structured_output`` (whether the
last call asked for the verdict's schema).

Everything happens before one deadline, the judge's ``timeout_seconds`` from the start:
the retries (``checks.judge.retries``) and, when the server refuses ``response_format``,
the call made again without it (``checks.judge.structured``).
"""

import json
import time

from checks.scorers.base import Abstain

from . import structured
from .client import MAX_REPLY_BYTES
from .retries import post_with_retries

BODY_QUOTE_CHARS = 2000
USER_AGENT = "evalsite-judge/1"


def ask_judge(judge, messages):
    """``(HttpReply | Abstain, facts)`` for the chat completion asking ``messages``."""
    started = time.monotonic()
    deadline = started + judge.timeout_seconds
    use_schema = not structured.is_refused(judge.url, judge.model)
    reply, attempts = _post(judge, messages, use_schema, deadline)
    if use_schema and structured.refuses(reply):
        structured.remember_refusal(judge.url, judge.model)
        use_schema = False
        reply, more = _post(judge, messages, use_schema, deadline)
        attempts += more
    facts = {"attempts": attempts, "structured_output": use_schema}
    if isinstance(reply, Abstain):
        return _with_timeout(reply, judge, started), facts
    failed = _http_failure(reply)
    return (failed if failed is not None else reply), facts


def _post(judge, messages, use_schema, deadline):
    payload = {"model": judge.model, "messages": messages, "temperature": 0}
    if use_schema:
        payload["response_format"] = structured.RESPONSE_FORMAT
    body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
    return post_with_retries(
        judge.url,
        body=body,
        headers=request_headers(judge.api_key),
        deadline=deadline,
        allow_private=judge.allow_private,
    )


def request_headers(api_key):
    """The call's headers: no ``Authorization`` at all when the key is empty."""
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json",
        "User-Agent": USER_AGENT,
        "Connection": "close",
    }
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    return headers


def _with_timeout(abstain, judge, started):
    """A ``timeout`` abstention says the judge's timeout, all calls and waits included."""
    if abstain.reason != "timeout":
        return abstain
    seconds = judge.timeout_seconds
    return Abstain(
        "timeout",
        {
            **abstain.detail,
            "message": f"the judge did not answer within {seconds:g} s (connect to last byte, retries included)",
            "timeout_seconds": seconds,
            "elapsed_ms": round((time.monotonic() - started) * 1000),
        },
    )


def _http_failure(reply):
    text = reply.body.decode("utf-8", errors="replace")
    if not 200 <= reply.status < 300:
        detail = {
            "status": reply.status,
            "body": text[:BODY_QUOTE_CHARS] + ("…" if len(text) > BODY_QUOTE_CHARS or reply.truncated else ""),
        }
        if reply.status == 429:
            if "retry-after" in reply.headers:
                detail["retry_after"] = reply.headers["retry-after"][:100]
            return Abstain(
                "rate_limited", {"message": "the judge's server is rate limiting calls (HTTP 429)", **detail}
            )
        return Abstain("http_error", {"message": f"the judge's server answered HTTP {reply.status}", **detail})
    if reply.truncated:
        return Abstain(
            "reply_too_large",
            {
                "message": f"the judge's reply is over {MAX_REPLY_BYTES} bytes; the rest was not read",
                "limit_bytes": MAX_REPLY_BYTES,
                "status": reply.status,
            },
        )
    return None
