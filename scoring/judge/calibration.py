"""How well a judge criterion agrees with reviewers, over the runs that have both.

The judge's verdict on a run is its newest fresh score of the criterion (``passed``:
the score reached the criterion's pass threshold). The reviewers' verdict is the
majority of their current labels of the config of the same name (a passing label
counts +1, a failing one -1; a tie is no verdict, and the run is left out), unless the
run has a reference label of it (an adjudication, ``scoring.review.adjudication``): that
decides. Over the
runs with both: ``n``, ``accuracy``, Cohen's ``kappa`` (agreement beyond chance:
``(p_o - p_e) / (1 - p_e)``; undefined, None, when chance already explains everything,
as when every verdict on both sides is the same), the confusion matrix (rows: the
reviewers, columns: the judge) and the runs where they disagree. Everything is counted
in SQL, so the figures follow a re-scored judge or an edited label at once.

Only the judge as it is configured now counts: its model (the score's
``scorer_version``) and the criterion's question (the score's config). A new model or a
reworded question starts the criterion's calibration again, so a judge nobody compared
with people never inherits another judge's kappa.
"""

from dataclasses import dataclass

from django.db.models import Case, Count, IntegerField, OuterRef, Q, Subquery, Sum, Value, When

from checks.scorers import config_hash
from datasets.models import Trace
from scoring.freshness import scores_fresh
from scoring.judge.selectors import judge_get
from scoring.labels import REFERENCE_HASH, label_scorer_id
from scoring.models import Score, ScoreSource

DISAGREEMENTS_SHOWN = 100
REFERENCE_WEIGHT = 1_000_000


@dataclass(frozen=True)
class Agreement:
    criterion: str
    n: int
    accuracy: float | None
    kappa: float | None
    confusion: dict  # {"human_pass": {"judge_pass": tp, "judge_fail": fn}, "human_fail": {...}}

    def as_dict(self):
        return {
            "criterion": self.criterion,
            "n": self.n,
            "accuracy": self.accuracy,
            "kappa": self.kappa,
            "confusion": self.confusion,
        }


def _current_judge_scores(project, criterion):
    """Judge scores of ``criterion`` by the judge configured now (model and question); all of them without one."""
    scores = Score.objects.filter(scorer=criterion, source=ScoreSource.JUDGE)
    judge = judge_get(project)
    if judge is None:
        return scores
    return scores.filter(
        scorer_version=judge.model, config_hash=config_hash({"question": judge.criteria.get(criterion, "")})
    )


# A label counts +1 (passing) or -1; a reference label (an adjudication) outweighs every reviewer.
_VOTE = Case(
    When(config_hash=REFERENCE_HASH, passed=True, then=Value(REFERENCE_WEIGHT)),
    When(config_hash=REFERENCE_HASH, then=Value(-REFERENCE_WEIGHT)),
    When(passed=True, then=Value(1)),
    default=Value(-1),
    output_field=IntegerField(),
)


def _paired_runs(project, criterion):
    """The project's runs with a reviewers' verdict and a judge verdict on ``criterion``, annotated."""
    labels = (
        Score.objects.filter(trace=OuterRef("pk"), scorer=label_scorer_id(criterion), source=ScoreSource.HUMAN)
        .values("trace")
        .annotate(vote=Sum(_VOTE))
        .values("vote")
    )
    judged = scores_fresh(_current_judge_scores(project, criterion).filter(trace=OuterRef("pk"))).order_by("-id")
    return (
        Trace.objects.filter(project=project)
        .annotate(
            vote=Subquery(labels[:1]),
            judge_passed=Subquery(judged.values("passed")[:1]),
            judge_reason=Subquery(judged.values("reason")[:1]),
        )
        .filter(judge_passed__isnull=False, vote__isnull=False)
        .exclude(vote=0)
    )


def agreement(*, project, criterion):
    """The ``Agreement`` of ``criterion`` with the project's reviewers."""
    counts = _paired_runs(project, criterion).aggregate(
        tp=Count("pk", filter=Q(vote__gt=0, judge_passed=True)),
        fn=Count("pk", filter=Q(vote__gt=0, judge_passed=False)),
        fp=Count("pk", filter=Q(vote__lt=0, judge_passed=True)),
        tn=Count("pk", filter=Q(vote__lt=0, judge_passed=False)),
    )
    tp, fn, fp, tn = (counts[k] for k in ("tp", "fn", "fp", "tn"))
    n = tp + fn + fp + tn
    confusion = {"human_pass": {"judge_pass": tp, "judge_fail": fn}, "human_fail": {"judge_pass": fp, "judge_fail": tn}}
    return Agreement(criterion, n, (tp + tn) / n if n else None, cohens_kappa(tp, fn, fp, tn), confusion)


def cohens_kappa(tp, fn, fp, tn):
    """Cohen's kappa of a 2x2 confusion matrix; None when it is undefined (no data, or p_e = 1)."""
    n = tp + fn + fp + tn
    if n == 0:
        return None
    observed = (tp + tn) / n
    expected = ((tp + fn) * (tp + fp) + (fp + tn) * (fn + tn)) / (n * n)
    if expected >= 1:
        return None
    return (observed - expected) / (1 - expected)


def disagreeing_runs(*, project, criterion):
    """The project's runs where the judge and the reviewers' majority disagree on ``criterion`` (a queryset)."""
    return _paired_runs(project, criterion).filter(Q(vote__gt=0, judge_passed=False) | Q(vote__lt=0, judge_passed=True))


def disagreements(*, project, criterion, limit=DISAGREEMENTS_SHOWN):
    """Runs where the judge and the reviewers disagree, newest first: trace id, judge verdict and reason, labels."""
    runs = list(disagreeing_runs(project=project, criterion=criterion).order_by("-started_at", "-id")[:limit])
    labels = {}
    rows = Score.objects.filter(
        trace__in=[r.pk for r in runs], scorer=label_scorer_id(criterion), source=ScoreSource.HUMAN
    ).values_list("trace_id", "detail", "reason")
    for trace_pk, detail, comment in rows:
        labels.setdefault(trace_pk, []).append(
            {"author": detail.get("author"), "label": detail.get("label"), "comment": comment}
        )
    return [
        {
            "trace_id": r.trace_id,
            "judge_passed": r.judge_passed,
            "judge_reason": r.judge_reason,
            "labels": labels.get(r.pk, []),
        }
        for r in runs
    ]


def advisory_reason(agreement, *, min_kappa, min_labels):
    """Why a criterion may not gate under these thresholds, or None when it may."""
    needs = f"needs {min_kappa:.2f} on {min_labels}"
    if agreement.n < min_labels:
        kappa = "kappa n/a" if agreement.kappa is None else f"kappa {agreement.kappa:.2f}"
        since = " (calibration starts again with each judge model and question)" if agreement.n == 0 else ""
        return f"{agreement.criterion}: advisory, {kappa} on {agreement.n} labels ({needs}){since}"
    if agreement.kappa is None:
        return f"{agreement.criterion}: advisory, kappa undefined on {agreement.n} labels (every verdict the same; {needs})"
    if agreement.kappa < min_kappa:
        return f"{agreement.criterion}: advisory, kappa {agreement.kappa:.2f} on {agreement.n} labels ({needs})"
    return None
