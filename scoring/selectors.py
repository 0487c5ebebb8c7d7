"""Reads of passes, and of runs' scores and abstentions, always scoped to one project.

A pass, score or abstention of another project is simply not found (404), like a
missing one. Lists are ordered for stable paging; nothing here loads a table whole.
"""

from collections import Counter

from django.db.models import Count, Exists, F, OuterRef, Q, Subquery
from django.db.models.functions import Coalesce

from datasets.run_selectors import trace_list
from evalsite.errors import NotFound
from scoring.feedback import feedback_scorer_id
from scoring.freshness import score_is_stale
from scoring.labels import label_scorer_id
from scoring.models import Abstention, ChunkStatus, Score, ScoreSource, ScoringChunk, ScoringPass
from scoring.score_configs import scores_with_config

# Skips listed per page of a pass (the rest through ``skips_after``).
PASS_SKIPS_PAGE = 100
ANY_SCORER = "any"


def _failed_scores(scorer=None):
    # Of the run's current revision, as the counts of ``runs_annotate_score_counts``.
    scores = Score.objects.filter(trace=OuterRef("pk"), passed=False, run_revision__gte=OuterRef("revision"))
    return scores.filter(scorer=scorer) if scorer and scorer != ANY_SCORER else scores


def _abstentions(scorer=None):
    abstentions = Abstention.objects.filter(trace=OuterRef("pk"))
    return abstentions.filter(scorer=scorer) if scorer and scorer != ANY_SCORER else abstentions


def runs_filter_by_scores(traces, *, scorer_failed=None, scorer_abstained=None, label=None, feedback=None):
    """``traces`` narrowed to runs with a failed score / an abstention of that scorer id
    (or of any scorer with ``"any"``), and to runs with a label or an end user's feedback
    ``name:value`` (``name:any`` for any value; ``true``/``false`` read as a passing or
    failing one): EXISTS subqueries on the scores' and abstentions' run index, so a list
    stays one query."""
    if scorer_failed:
        traces = traces.filter(Exists(_failed_scores(scorer_failed)))
    if scorer_abstained:
        traces = traces.filter(Exists(_abstentions(scorer_abstained)))
    if label:
        traces = traces.filter(Exists(_labels(label)))
    if feedback:
        traces = traces.filter(Exists(_feedback(feedback)))
    return traces


def _labels(spec):
    name, _, value = spec.partition(":")
    labels = Score.objects.filter(trace=OuterRef("pk"), source=ScoreSource.HUMAN, scorer=label_scorer_id(name))
    return _by_value(labels, value, "detail__label")


def _feedback(spec):
    name, _, value = spec.partition(":")
    given = Score.objects.filter(trace=OuterRef("pk"), source=ScoreSource.FEEDBACK, scorer=feedback_scorer_id(name))
    return _by_value(given, value, "detail__value")


def _by_value(scores, value, field):
    if value in ("", ANY_SCORER):
        return scores
    if value in ("true", "false"):
        return scores.filter(passed=value == "true")
    try:
        return scores.filter(**{field: float(value)})
    except ValueError:
        return scores.filter(**{field: value})


def runs_list(*, project, scorer_failed=None, scorer_abstained=None, label=None, feedback=None, **filters):
    """The project's runs matching ``datasets.run_selectors.trace_list``'s ``filters`` and the score filters."""
    return runs_filter_by_scores(
        trace_list(project=project, **filters), scorer_failed=scorer_failed, scorer_abstained=scorer_abstained,
        label=label, feedback=feedback,
    )  # fmt: skip


# The runs list's sort orders, over runs annotated with their score counts
# (``runs_annotate_score_counts``): a run without a latency or a cost sorts last.
RUN_SORTS = {
    "started": ("-started_at", "-id"),
    "latency": (F("latency_ms").desc(nulls_last=True), "-id"),
    "cost": (F("cost_cents").desc(nulls_last=True), "-id"),
    "failures": ("-scores_failed", "-started_at", "-id"),
}


def runs_sorted(traces, sort):
    """``traces`` in the ``RUN_SORTS`` order named ``sort``."""
    return traces.order_by(*RUN_SORTS[sort])


def run_ids_oldest_first(traces, *, limit):
    """The trace ids of the first ``limit`` of ``traces``, oldest first (a capture of every match)."""
    return list(traces.order_by("started_at", "id").values_list("trace_id", flat=True)[:limit])


def runs_annotate_scores(traces):
    """Runs with ``has_failed_score`` and ``has_abstention`` flags (still one query)."""
    return traces.annotate(has_failed_score=Exists(_failed_scores()), has_abstention=Exists(_abstentions()))


def _count(queryset, distinct=None):
    counted = queryset.order_by().values("trace").annotate(n=Count(distinct or "id", distinct=bool(distinct)))
    return Coalesce(Subquery(counted.values("n")[:1]), 0)


def runs_annotate_score_counts(traces):
    """Runs with ``scores_passed`` and ``scores_failed`` (scores of the run's current revision)
    and ``scorers_abstained`` (scorers that abstained on it, each once): subqueries on the
    scores' and abstentions' run index, evaluated for the rows of the page only."""
    # Checks only: a reviewer's label or a user's feedback is not a check the run passed or failed.
    current = Score.objects.filter(trace=OuterRef("pk"), run_revision__gte=OuterRef("revision")).exclude(
        source__in=(ScoreSource.HUMAN, ScoreSource.FEEDBACK)
    )
    return traces.annotate(
        scores_passed=_count(current.filter(passed=True)),
        scores_failed=_count(current.filter(passed=False)),
        scorers_abstained=_count(Abstention.objects.filter(trace=OuterRef("pk")), distinct="scorer"),
    )


def run_scores(trace):
    """The run's scores (by scorer, each with ``stale``) and abstentions (newest first), for its detail."""
    scores = list(
        scores_with_config(trace.scores.select_related("experiment")).order_by("scorer", "scorer_version", "id")
    )
    for score in scores:
        score.stale = score_is_stale(score, trace)
    abstentions = list(trace.abstentions.select_related("experiment").order_by("-created_at", "-id"))
    return scores, abstentions


def pass_get(*, project, pass_id):
    scoring_pass = ScoringPass.objects.filter(project=project, pk=pass_id).first()
    if scoring_pass is None:
        raise NotFound(f"No scoring pass {pass_id} in this project.")
    return scoring_pass


def pass_list(*, project):
    """The project's passes, newest first (paginate the result)."""
    return ScoringPass.objects.filter(project=project)


def pass_skips(*, scoring_pass, after=None, limit=None):
    """``(skips, more)``: up to ``limit`` (a page) skips of the pass after skip id ``after``, oldest first.

    Each skip is ``{id, trace_id, scorer, config_hash, kind, reason, detail}``. A dry run writes no
    skips: its list is the sample its chunks kept.
    """
    limit = limit or PASS_SKIPS_PAGE
    if scoring_pass.dry_run:
        sample = []
        for report in ScoringChunk.objects.filter(scoring_pass=scoring_pass).values_list("report", flat=True):
            sample.extend((report or {}).get("skipped", []))
            if len(sample) >= limit:
                break
        return sample[:limit], False
    rows = (
        Abstention.objects.filter(scoring_pass=scoring_pass)
        .order_by("id")
        .values("id", "trace__trace_id", "scorer", "config_hash", "kind", "reason", "detail")
    )
    if after is not None:
        rows = rows.filter(id__gt=after)
    rows = list(rows[: limit + 1])
    skips = [
        {
            "id": r["id"],
            "trace_id": r["trace__trace_id"],
            "scorer": r["scorer"],
            "config_hash": r["config_hash"],
            "kind": r["kind"],
            "reason": r["reason"],
            "detail": r["detail"],
        }
        for r in rows[:limit]
    ]
    return skips, len(rows) > limit


def pass_skip_counts(*, scoring_pass):
    """``{reason: count}`` of the pass's skips (a dry run: what its chunks counted)."""
    if scoring_pass.dry_run:
        counts = Counter()
        for report in ScoringChunk.objects.filter(scoring_pass=scoring_pass).values_list("report", flat=True):
            counts.update((report or {}).get("skipped_by_reason", {}))
        return dict(sorted(counts.items()))
    rows = (
        Abstention.objects.filter(scoring_pass=scoring_pass)
        .order_by("reason")
        .values_list("reason")
        .annotate(n=Count("id"))
    )
    return dict(rows)


def pass_dry_run_scores(*, scoring_pass, limit=None):
    """What a dry-run pass would have written: the sample its chunks kept."""
    limit = limit or PASS_SKIPS_PAGE
    sample = []
    for report in ScoringChunk.objects.filter(scoring_pass=scoring_pass).values_list("report", flat=True):
        sample.extend((report or {}).get("scores", []))
        if len(sample) >= limit:
            break
    return sample[:limit]


def abstentions_for_review(*, project, scorer=None, reason=None, kind=None, unreviewed=False):
    """The project's abstentions and skips, newest first, with their run (paginate the result)."""
    rows = Abstention.objects.filter(project=project).select_related("trace", "reviewed_by")
    if scorer:
        rows = rows.filter(scorer=scorer)
    if reason:
        rows = rows.filter(reason=reason)
    if kind:
        rows = rows.filter(kind=kind)
    if unreviewed:
        rows = rows.filter(reviewed_at__isnull=True)
    return rows


def abstention_filter_choices(*, project):
    """The scorers and reasons that occur in the project's abstentions, for filter menus."""
    rows = Abstention.objects.filter(project=project)
    scorers = rows.order_by("scorer").values_list("scorer", flat=True).distinct()
    reasons = rows.order_by("reason").values_list("reason", flat=True).distinct()
    return list(scorers), list(reasons)


def abstentions_of_project(*, project, ids):
    """The abstentions among ``ids`` that belong to ``project`` (others are ignored)."""
    return Abstention.objects.filter(project=project, pk__in=ids)


def chunk_counts(*, now):
    """Chunks of every project by state: ``{"queued", "running", "leased"}`` (leased: running, lease not run out)."""
    return ScoringChunk.objects.filter(status__in=[ChunkStatus.QUEUED, ChunkStatus.RUNNING]).aggregate(
        queued=Count("id", filter=Q(status=ChunkStatus.QUEUED)),
        running=Count("id", filter=Q(status=ChunkStatus.RUNNING)),
        leased=Count("id", filter=Q(status=ChunkStatus.RUNNING, lease_until__gt=now)),
    )
