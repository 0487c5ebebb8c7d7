"""Testing a project's judge: one real call with a tiny fixed prompt, nothing stored.

``judge_connection_test(config)`` asks the configured endpoint and model one fixed
question about one fixed answer through the judge's own scoring path
(``checks.judge.judge_score``), so the test meets exactly what a scoring pass would:
the same URL, headers, deadline, 1 MiB cap and reply parsing. It returns a
``ConnectionTest``: ``ok`` (reachable, speaks the OpenAI API) with the model's score and
reason, or the abstention's reason code (``address_refused``, ``unreachable``,
``timeout``, ``rate_limited``, ``http_error``, ``bad_response``, ``prose_reply``...) and
its message. What the server sent back is never shown: the test answers whether the
endpoint is a judge, not what some other service at that address says (the addresses
it may reach are ``checks.outbound``'s rule). Also: the elapsed milliseconds, the calls made (retries on 429 and 5xx) and whether
the server took the verdict's schema as structured output.

The call's timeout is the judge's ``timeout_seconds``, cut to fit the server's request
timeout (``EVALSITE_REQUEST_TIMEOUT_SECONDS``) because the page waits for the answer.
Everything returned went through the judge's redaction: the api key is never in it.
"""

import dataclasses
import time
from dataclasses import dataclass

from django.conf import settings

from checks.judge import judge_from, judge_score
from checks.scorers.base import Abstain, RunView

PROBE_CRITERION = "connection_test"
PROBE_QUESTION = "Does the answer say OK?"
PROBE_RUN = RunView(
    trace_id="connection-test",
    input="Reply with the single word OK.",
    output="OK",
    status="ok",
    error=None,
    latency_ms=None,
    cost_cents=None,
    spans=(),
)
# The page's own work around the call (session, template) needs a moment of the request's time.
REQUEST_MARGIN_SECONDS = 2


@dataclass(frozen=True)
class ConnectionTest:
    ok: bool
    elapsed_ms: int
    model: str
    url: str  # where the call went: {endpoint}/chat/completions
    score: float | None = None
    reason: str = ""  # the model's reason when ok, the abstention's reason code otherwise
    message: str = ""  # what went wrong, when not ok
    status: int | None = None  # the HTTP status, when the server answered with one
    attempts: int = 0  # calls made: more than one when the server asked to try again (429, 5xx)
    structured_output: bool | None = None  # False when the server refused response_format


def judge_connection_test(config):
    """One call to the judge configured by ``config`` (a ``JudgeConfig`` row or a ``Judge``); never raises."""
    judge = judge_from(config, allow_private=settings.EVALSITE_OUTBOUND_ALLOW_PRIVATE)
    timeout = max(1, min(judge.timeout_seconds, settings.EVALSITE_REQUEST_TIMEOUT_SECONDS - REQUEST_MARGIN_SECONDS))
    probe = dataclasses.replace(judge, criteria={PROBE_CRITERION: PROBE_QUESTION}, timeout_seconds=timeout)
    started = time.monotonic()
    outcome = judge_score(config=probe, criterion_id=PROBE_CRITERION, run=PROBE_RUN)
    elapsed_ms = round((time.monotonic() - started) * 1000)
    if isinstance(outcome, Abstain):
        detail = outcome.detail
        return ConnectionTest(
            ok=False,
            elapsed_ms=elapsed_ms,
            model=judge.model,
            url=judge.url,
            reason=outcome.reason,
            message=str(detail.get("message", "")),
            status=detail.get("status") if isinstance(detail.get("status"), int) else None,
            **_call_facts(detail),
        )
    return ConnectionTest(
        ok=True,
        elapsed_ms=elapsed_ms,
        model=judge.model,
        url=judge.url,
        score=outcome.value,
        reason=outcome.reason,
        **_call_facts(outcome.detail),
    )


def _call_facts(detail):
    return {"attempts": detail.get("attempts", 0), "structured_output": detail.get("structured_output")}
