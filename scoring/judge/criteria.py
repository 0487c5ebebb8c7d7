"""Judge criteria inside scoring passes: the criteria as scorers, and their calls made concurrently.

A project's configured criteria join the built-in scorers in ``scoring.selection.catalog`` as
``JudgeCriterion`` scorers: id the criterion's id, ``version`` the judge's model,
config always ``{"question": ...}`` (so a reworded question scores a run anew).
``ScoringPlan`` resolves them like any scorer; ``scoring.pipeline.engine.outcomes_compute``
leaves them out, and ``outcomes_judge`` makes their calls instead: up to the judge's
``max_concurrency`` at a time (``checks.judge.runner``), each outcome handed to
``on_outcome`` as soon as the model answers, so the caller writes it at once and a pass
cut short keeps every judge score it finished.
"""

from dataclasses import dataclass, field

from checks.judge.runner import judge_many
from checks.judge.spec import Judge, judge_score_config, judge_scorer_version
from checks.scorers import Abstain, Scorer
from evalsite.metrics import JUDGE_CALLS, JUDGE_SECONDS
from scoring.pipeline.engine import Outcome

SOURCE_JUDGE = "judge"
# A request's config may not name anything for a criterion: its question is its config.
_NO_CONFIG = {"type": "object", "additionalProperties": False, "properties": {}}


@dataclass(frozen=True)
class JudgeCriterion(Scorer):
    judge: Judge | None = field(default=None, repr=False)


def _not_called(view, config):
    return Abstain("scorer_error", {"message": "a judge criterion is called through outcomes_judge"})


def scorers_from_judge(judge):
    """``{criterion id: JudgeCriterion}`` for every criterion of ``judge`` (a ``Judge``)."""
    version = judge_scorer_version(judge)
    return {
        criterion_id: JudgeCriterion(
            id=criterion_id,
            description=question,
            version=version,
            kind="judge",
            needs_config=False,
            config_schema=_NO_CONFIG,
            expectation_keys=(),
            func=_not_called,
            fixed_config=judge_score_config(judge, criterion_id),
            judge=judge,
        )
        for criterion_id, question in sorted(judge.criteria.items())
    }


def is_judged(scorer):
    return scorer.kind == "judge"


def outcomes_judge(plan, runs, *, on_outcome, decided=None, deadline=None):
    """Judge ``runs`` on the plan's criteria; each ``Outcome`` goes to ``on_outcome`` as it arrives.

    Keys in ``decided`` are not judged again (as ``outcomes_compute``). With ``deadline``
    (a ``time.monotonic()`` instant), a call that cannot finish before it is not made:
    the judge abstains ``deadline``. Returns ``already``: the ``existing`` keys skipped.
    ``on_outcome`` raising stops the calls not yet started and propagates.
    """
    criteria = [scorer for scorer in plan.scorers if is_judged(scorer)]
    if not criteria:
        return 0
    already = 0
    pending = {}
    for run in runs:
        for scorer, resolved in plan.for_run(run):
            if not is_judged(scorer):
                continue
            counts = (decided or {}).get((run.pk, scorer.id, scorer.version, resolved.config_hash))
            if counts is not None:
                already += counts
                continue
            pending[(id(run.view), scorer.id)] = (run, resolved)

    def delivered(view, criterion_id, result):
        run, resolved = pending[(id(view), criterion_id)]
        version = criteria[0].version
        on_outcome(
            Outcome(run, criterion_id, version, resolved.config_hash, resolved.config_json, result, SOURCE_JUDGE)
        )

    judge_many(
        config=criteria[0].judge,
        pairs=[(pending[key][0].view, key[1]) for key in pending],
        on_result=delivered,
        deadline=deadline,
        on_call=_call_counted,
    )
    return already


def _call_counted(result, seconds):
    JUDGE_CALLS.labels(outcome=result.reason if isinstance(result, Abstain) else "scored").inc()
    JUDGE_SECONDS.observe(seconds)
