"""The judge's calls, tried again on 429 and 5xx, all within the judge's timeout.

``post_with_retries(url, body=, headers=, deadline=)`` returns ``(outcome, attempts)``:
the last ``HttpReply`` or ``Abstain`` of ``checks.judge.client.http_post`` and how many
calls were made.

- ``deadline`` (the call's start plus the judge's timeout) bounds the whole: every
  attempt and every wait between them.
- A 429 or any 5xx is tried again, up to ``MAX_ATTEMPTS`` calls. The wait is the
  server's ``Retry-After`` (seconds or an HTTP date; ``retry-after-ms`` too) when it
  sends one, else an exponential backoff with jitter (0.5 s, 1 s, 2 s..., at most
  ``MAX_BACKOFF_SECONDS``).
- When the wait would leave less than ``MIN_ATTEMPT_SECONDS`` for the next call before
  the deadline, there is no next call: the last reply is the outcome, so a 429 still
  abstains ``rate_limited`` with the ``Retry-After`` the server asked for.
- No status at all (timeout, unreachable) is not tried again: a server that does not
  answer within the timeout will not answer within what is left of it.
"""

import email.utils
import math
import random
import time

from .client import http_post

MAX_ATTEMPTS = 4
MAX_BACKOFF_SECONDS = 8.0
MIN_ATTEMPT_SECONDS = 0.5
_FIRST_BACKOFF_SECONDS = 0.5


def post_with_retries(url, *, body, headers, deadline, allow_private=False):
    """``(HttpReply | Abstain, attempts)`` for one judge call, retried before ``deadline`` (monotonic)."""
    attempts = 0
    while True:
        attempts += 1
        reply = http_post(url, body=body, headers=headers, deadline=deadline, allow_private=allow_private)
        if not is_retryable(reply) or attempts >= MAX_ATTEMPTS:
            return reply, attempts
        wait = retry_wait(reply.headers, attempts)
        if time.monotonic() + wait + MIN_ATTEMPT_SECONDS > deadline:
            return reply, attempts
        time.sleep(wait)


def is_retryable(reply):
    status = getattr(reply, "status", None)
    return status == 429 or (status is not None and 500 <= status < 600)


def retry_wait(headers, attempts):
    """Seconds to wait before call ``attempts + 1``: the server's word, else backoff with jitter."""
    asked = _retry_after_seconds(headers)
    if asked is not None:
        return asked
    backoff = min(_FIRST_BACKOFF_SECONDS * 2 ** (attempts - 1), MAX_BACKOFF_SECONDS)
    return backoff * random.uniform(0.75, 1.0)


def _retry_after_seconds(headers):
    """``retry-after-ms`` or ``retry-after`` (seconds or an HTTP date) in seconds, or None."""
    for name, scale in (("retry-after-ms", 1000), ("retry-after", 1)):
        try:
            seconds = float(headers.get(name, "").strip()) / scale
        except ValueError:
            continue
        return max(seconds, 0.0) if math.isfinite(seconds) else None
    value = headers.get("retry-after", "").strip()
    if not value:
        return None
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None or when.tzinfo is None:
        return None
    return max(when.timestamp() - time.time(), 0.0)
