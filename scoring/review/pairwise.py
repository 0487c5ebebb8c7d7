"""Pairwise review: two experiments' answers to the same golden case, side by side, and
reviewers' judgements of which is better.

A pair is shown as ``first`` against ``second`` (on the pages: the candidate against the
base). The cases of a pair are the active golden cases both experiments answered; each
side shows its newest run of the case. A judgement says whether ``first``'s answer is
``better``, ``worse`` or a ``tie``; it is stored in the pair's one order
(``PairwiseJudgement``), so asking the other way round reads and writes the same row
with the verdict flipped. One judgement per reviewer, case and pair: judging again
replaces it. The figures of a pair are ``checks.stats.win_rate``: wins, losses, ties,
and the win rate without the ties with its Wilson 95% interval.
"""

from django.db import IntegrityError, transaction
from django.db.models import Count, Q

from checks.stats import win_rate
from datasets.models import CaseStatus, Trace
from evalsite.errors import Invalid
from scoring.models import PairwiseJudgement, PairwiseVerdict

FLIPPED = {PairwiseVerdict.BETTER: PairwiseVerdict.WORSE, PairwiseVerdict.WORSE: PairwiseVerdict.BETTER}


def _flip(verdict):
    return FLIPPED.get(verdict, verdict)


def _ordered(first, second):
    """``(experiment_a, experiment_b, flipped)``: the pair in its stored order."""
    return (first, second, False) if first.pk < second.pk else (second, first, True)


def _pair_check(first, second):
    if first.pk == second.pk:
        raise Invalid(
            "A pairwise review needs two different experiments.",
            errors=[{"field": "against", "message": "must be another experiment than `experiment`"}],
        )


def _newest_runs(project, experiment):
    """``{case id: trace}`` of the experiment's newest run of each active case."""
    runs = (
        Trace.objects.filter(project=project, experiment=experiment, case__status=CaseStatus.ACTIVE)
        .select_related("case", "case__dataset")
        .order_by("case_id", "-started_at", "-id")
        .only("id", "trace_id", "case__id", "case__name", "case__input", "case__dataset__name")
    )
    newest = {}
    for run in runs:
        newest.setdefault(run.case_id, run)
    return newest


def pairwise_cases(*, project, first, second):
    """The cases both experiments answered, by dataset then name: ``[{"case", "first", "second"}]``
    (the newest run of each side)."""
    _pair_check(first, second)
    ours, theirs = _newest_runs(project, first), _newest_runs(project, second)
    rows = [
        {"case": run.case, "first": run, "second": theirs[case_id]}
        for case_id, run in ours.items()
        if case_id in theirs
    ]
    return sorted(rows, key=lambda row: (row["case"].dataset.name, row["case"].name, row["case"].pk))


def author_verdicts(*, first, second, author):
    """``{case id: verdict of first against second}`` of one author's judgements of the pair."""
    a, b, flipped = _ordered(first, second)
    rows = PairwiseJudgement.objects.filter(experiment_a=a, experiment_b=b, author=author)
    return {case_id: _flip(v) if flipped else v for case_id, v in rows.values_list("case_id", "verdict")}


def judgement_seen_from(judgement, first):
    """``(verdict, first's trace, the other's trace)`` of a stored judgement, read from ``first``'s side."""
    if judgement.experiment_a_id == first.pk:
        return judgement.verdict, judgement.trace_a, judgement.trace_b
    return _flip(judgement.verdict), judgement.trace_b, judgement.trace_a


def pairwise_judge(*, project, first, second, case_id, verdict, author, reviewer=None):
    """Record ``author``'s ``verdict`` of ``first``'s answer to the case against ``second``'s.

    ``author`` is the reviewer's user name (``reviewer`` their user) or ``key:<name>``.
    Idempotent: one row per author, case and pair (the unique constraint), a second
    judgement replaces the first. Returns ``(judgement, created)``. A case the two did not
    both answer is a 400 naming ``case_id``; an unknown verdict one naming ``verdict``.
    """
    if verdict not in PairwiseVerdict.values:
        raise Invalid(
            f"Unknown verdict {verdict!r}.",
            errors=[{"field": "verdict", "message": f"must be one of {', '.join(PairwiseVerdict.values)}"}],
        )
    row = next(
        (r for r in pairwise_cases(project=project, first=first, second=second) if r["case"].pk == case_id), None
    )
    if row is None:
        raise Invalid(
            f"Case {case_id} has no run of both {first.name} and {second.name}.",
            errors=[{"field": "case_id", "message": "must be an active case both experiments answered"}],
        )
    a, b, flipped = _ordered(first, second)
    trace_a, trace_b = (row["second"], row["first"]) if flipped else (row["first"], row["second"])
    values = {"trace_a": trace_a, "trace_b": trace_b, "verdict": _flip(verdict) if flipped else verdict}
    values["reviewer"] = reviewer
    key = {"project": project, "case_id": case_id, "experiment_a": a, "experiment_b": b, "author": author}
    try:
        with transaction.atomic():
            return PairwiseJudgement.objects.update_or_create(**key, defaults=values)
    except IntegrityError:  # another request of the same reviewer created it meanwhile: replace it
        with transaction.atomic():
            return PairwiseJudgement.objects.update_or_create(**key, defaults=values)


def pairwise_summary(*, first, second):
    """The figures of the pair from ``first``'s side (``checks.stats.win_rate``) plus ``reviewers``
    and ``cases``: every author's judgement counts once, a case judged by two counts twice."""
    _pair_check(first, second)
    a, b, flipped = _ordered(first, second)
    counted = PairwiseJudgement.objects.filter(experiment_a=a, experiment_b=b).aggregate(
        better=Count("id", filter=Q(verdict=PairwiseVerdict.BETTER)),
        worse=Count("id", filter=Q(verdict=PairwiseVerdict.WORSE)),
        ties=Count("id", filter=Q(verdict=PairwiseVerdict.TIE)),
        reviewers=Count("author", distinct=True),
        cases=Count("case", distinct=True),
    )
    wins, losses = (counted["worse"], counted["better"]) if flipped else (counted["better"], counted["worse"])
    return {
        "experiment": first.name,
        "against": second.name,
        **win_rate(wins, losses, counted["ties"]),
        "reviewers": counted["reviewers"],
        "cases": counted["cases"],
    }
