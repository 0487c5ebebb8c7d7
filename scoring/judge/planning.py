"""The judge's limits with this server's settings: how many runs a pass may judge.

- Synchronous requests (``POST /v1/api/score``): ``judge_sync_run_cap`` is
  ``EVALSITE_REQUEST_TIMEOUT_SECONDS // (timeout_seconds × criteria named)``
  (``checks.judge.limits.judge_run_cap``). ``judge_sync_cap_check`` raises the 400
  naming the cap when a request asks for more, and must run before any model is called.
  ``judge_deadline`` is the instant the request's judge calls must end by.
- Worker passes (``POST /v1/api/passes``): not bound by the request timeout but by
  ``EVALSITE_JUDGE_PASS_MAX_RUNS`` runs per pass that names a judge criterion
  (``judge_pass_max_runs``); each call is still bounded by ``timeout_seconds`` and runs
  at most ``max_concurrency`` at a time (``checks.judge.runner``).
"""

import time

from django.conf import settings

from checks.judge.limits import judge_run_cap
from checks.judge.spec import judge_from
from evalsite.errors import Invalid


def judge_sync_run_cap(*, config, criteria_count):
    return judge_run_cap(settings.EVALSITE_REQUEST_TIMEOUT_SECONDS, judge_from(config).timeout_seconds, criteria_count)


def judge_deadline(started=None):
    """``time.monotonic()`` of ``started`` (default: now) plus the request timeout: pass it to ``judge_score``."""
    return (time.monotonic() if started is None else started) + settings.EVALSITE_REQUEST_TIMEOUT_SECONDS


def judge_sync_cap_check(*, config, criteria_count, requested, field):
    """Raise ``Invalid`` when ``requested`` runs (from ``trace_ids`` or ``limit``) exceed the cap; else return the cap."""
    cap = judge_sync_run_cap(config=config, criteria_count=criteria_count)
    if requested > cap:
        timeout = judge_from(config).timeout_seconds
        request_timeout = settings.EVALSITE_REQUEST_TIMEOUT_SECONDS
        noun = "criterion" if criteria_count == 1 else "criteria"
        message = (
            f"{field} asks for {requested} judged runs, but a synchronous request can judge at most {cap}: "
            f"request timeout {request_timeout} s // (judge timeout {timeout} s × {criteria_count} judge {noun}). "
            "Ask for fewer runs, omit limit to judge as many recent runs as fit, or use POST /v1/api/passes."
        )
        raise Invalid(message, errors=[{"field": field, "message": message}], extra={"judge_run_cap": cap})
    return cap


def judge_pass_max_runs():
    return settings.EVALSITE_JUDGE_PASS_MAX_RUNS
