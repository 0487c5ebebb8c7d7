"""The judge as a scorer: one model call for one run and one criterion.

``judge_score(config=, criterion_id=, run=, deadline=None)`` returns a ``Result`` or an
``Abstain`` (``checks.scorers.base``) and never raises. In order:

- ``not_configured``: the project's judge is off, or ``criterion_id`` is not one of its
  criteria (a criterion removed after a pass was queued).
- ``no_answer``: the run has no answer (``None``, blank, ``[]``, ``{}``). No call.
- ``deadline``: ``deadline`` (a ``time.monotonic()`` instant) leaves less than the
  judge's ``timeout_seconds``, give or take ``DEADLINE_TOLERANCE_SECONDS``. No call.
- The call (``checks.judge.calls``): ``POST {endpoint}/chat/completions`` with the
  verdict's JSON schema as ``response_format``, tried again on 429 and 5xx within the
  judge's timeout. Then ``unreachable``, ``timeout``, ``rate_limited`` (HTTP 429),
  ``http_error`` (any other non-2xx), each with the status and the start of the body;
  ``reply_too_large`` (a 2xx reply over 1 MiB, the rest unread); ``bad_response``,
  ``prose_reply``, ``score_off_scale`` (``checks.judge.replies``).
- Otherwise a ``Result``: ``value`` is the model's score, ``passed`` is
  ``score >= PASS_THRESHOLD`` (0.5), ``reason`` is the model's reason, and ``detail``
  carries the criterion, its question, the model, the score, the threshold, the start
  of the reply, the number of calls (``attempts``) and whether the reply was asked for
  as structured output (``structured_output``).

The api key never appears in what comes back or in a log line: every outcome is
redacted before it leaves this module.
"""

import logging
import time

from checks.scorers.base import Abstain, Result
from checks.scorers.values import is_empty

from .calls import ask_judge
from .prompt import judge_messages
from .redaction import redact
from .replies import completion_content, quote, verdict_from_reply
from .spec import PASS_THRESHOLD, judge_from

logger = logging.getLogger("scoring.judge")

# The time a synchronous request spends before its first call (auth, loading runs) must
# not cost it the call its arithmetic promised: with a 30 s request timeout and a 30 s
# judge timeout, the one run that fits is judged.
DEADLINE_TOLERANCE_SECONDS = 0.5
# Abstentions that say the model server is down, slow or refusing: an operator wants to see them.
_OPERATIONAL = {
    "unreachable",
    "address_refused",
    "timeout",
    "rate_limited",
    "http_error",
    "reply_too_large",
    "bad_response",
}


def judge_score(*, config, criterion_id, run, deadline=None):
    """Ask the judge ``criterion_id`` about ``run`` (a ``RunView``); ``Result`` or ``Abstain``, never raises."""
    judge = judge_from(config)
    try:
        outcome = _score(judge, criterion_id, run, deadline)
    except Exception as exc:  # one odd run or reply never kills a pass
        outcome = Abstain(
            "scorer_error",
            {"message": f"the judge raised {type(exc).__name__}: {exc}"[:1000], "exception": type(exc).__name__},
        )
    if isinstance(outcome, Abstain):
        detail = {**outcome.detail, "criterion": criterion_id, "model": judge.model}
        outcome = Abstain(outcome.reason, redact(detail, judge.api_key))
    else:
        outcome = Result(
            outcome.value, outcome.passed, redact(outcome.reason, judge.api_key), redact(outcome.detail, judge.api_key)
        )
    _log(outcome, judge, criterion_id, run)
    return outcome


def _score(judge, criterion_id, run, deadline):
    if not judge.is_configured:
        return Abstain("not_configured", {"message": "the project's judge is not configured (endpoint and model)"})
    question = judge.criteria.get(criterion_id)
    if question is None:
        return Abstain("not_configured", {"message": f"{criterion_id} is not a configured judge criterion"})
    if is_empty(run.output):
        return Abstain("no_answer", {"message": "the run has no answer: there is nothing to judge"})
    if deadline is not None:
        short = _deadline_short(judge, deadline)
        if short is not None:
            return short

    messages = judge_messages(
        question=question,
        run_input=run.input,
        answer=run.output,
        expected=run.expected_output,
        has_expected=run.expected_output is not None,
    )
    reply, facts = ask_judge(judge, messages)
    if isinstance(reply, Abstain):
        return Abstain(reply.reason, {**reply.detail, **facts})
    content = completion_content(reply.body)
    if isinstance(content, Abstain):
        return Abstain(content.reason, {**content.detail, "status": reply.status})
    verdict = verdict_from_reply(content)
    if isinstance(verdict, Abstain):
        return verdict
    return Result(
        value=verdict.score,
        passed=verdict.score >= PASS_THRESHOLD,
        reason=verdict.reason,
        detail={
            "criterion": criterion_id,
            "question": question,
            "model": judge.model,
            "score": verdict.score,
            "threshold": PASS_THRESHOLD,
            "reply": quote(content),
            "elapsed_ms": round(reply.elapsed_seconds * 1000),
            **facts,
        },
    )


def _deadline_short(judge, deadline):
    """An ``Abstain`` when the request's deadline leaves less than the judge's timeout."""
    left = deadline - time.monotonic()
    if left + DEADLINE_TOLERANCE_SECONDS >= judge.timeout_seconds:
        return None
    return Abstain(
        "deadline",
        {
            "message": (
                f"the request's deadline left {max(left, 0):.1f} s, less than the judge's timeout of "
                f"{judge.timeout_seconds} s; no call was made"
            ),
            "seconds_left": round(max(left, 0), 3),
            "timeout_seconds": judge.timeout_seconds,
        },
    )


def _log(outcome, judge, criterion_id, run):
    if isinstance(outcome, Result):
        logger.debug("judge %s on run %s: score %s (model %s)", criterion_id, run.trace_id, outcome.value, judge.model)
        return
    level = logging.WARNING if outcome.reason in _OPERATIONAL else logging.DEBUG
    # The detail was redacted above; the message is all a log line needs.
    logger.log(
        level,
        "judge %s on run %s abstained (%s, model %s): %s",
        criterion_id,
        run.trace_id,
        outcome.reason,
        judge.model,
        outcome.detail.get("message", ""),
    )
