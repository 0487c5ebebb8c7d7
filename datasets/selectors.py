"""Reads of runs, always scoped to one project (another project's run is simply not found)."""

from django.db.models import Exists, OuterRef, Q

from datasets.models import GoldenCase, Trace
from evalsite.errors import NotFound
from scoring.models import Abstention, Score

ANY_SCORER = "any"


def _failed_scores(scorer=None):
    scores = Score.objects.filter(trace=OuterRef("pk"), passed=False)
    return scores.filter(scorer=scorer) if scorer and scorer != ANY_SCORER else scores


def _abstentions(scorer=None):
    abstentions = Abstention.objects.filter(trace=OuterRef("pk"))
    return abstentions.filter(scorer=scorer) if scorer and scorer != ANY_SCORER else abstentions


def trace_list(
    *,
    project,
    experiment=None,
    case=None,
    status=None,
    started_from=None,
    started_to=None,
    text=None,
    scorer_failed=None,
    scorer_abstained=None,
):
    """The project's runs matching the filters, newest first (paginate the result).

    ``scorer_failed`` / ``scorer_abstained`` keep runs with a failed score / an
    abstention of that scorer id, or of any scorer with ``"any"``: EXISTS subqueries on
    the scores' and abstentions' run index, so the list stays one query.
    """
    traces = Trace.objects.filter(project=project).select_related("experiment")
    if scorer_failed:
        traces = traces.filter(Exists(_failed_scores(scorer_failed)))
    if scorer_abstained:
        traces = traces.filter(Exists(_abstentions(scorer_abstained)))
    if experiment:
        traces = traces.filter(experiment__name=experiment)
    if case is not None:
        traces = traces.filter(case_id=case)
    if status:
        traces = traces.filter(status=status)
    if started_from:
        traces = traces.filter(started_at__gte=started_from)
    if started_to:
        traces = traces.filter(started_at__lt=started_to)
    if text:
        traces = traces.filter(
            Q(trace_id__icontains=text) | Q(name__icontains=text) | Q(input__icontains=text) | Q(output__icontains=text)
        )
    return traces


def trace_flags_annotate(traces):
    """Runs with ``has_failed_score``, ``has_abstention`` and ``was_captured`` flags (still one query)."""
    return traces.annotate(
        has_failed_score=Exists(_failed_scores()),
        has_abstention=Exists(_abstentions()),
        was_captured=Exists(
            GoldenCase.objects.filter(dataset__project=OuterRef("project"), source_trace_id=OuterRef("trace_id"))
        ),
    )


def trace_scores(trace):
    """The run's scores (by scorer) and abstentions (newest first), for its detail."""
    scores = list(trace.scores.select_related("experiment").order_by("scorer", "scorer_version", "id"))
    abstentions = list(trace.abstentions.select_related("experiment").order_by("-created_at", "-id"))
    return scores, abstentions


def trace_get(*, project, trace_id):
    if "\x00" in trace_id:
        # PostgreSQL refuses NUL in a query; no stored trace_id contains one.
        raise NotFound(f"No run with trace_id {trace_id!r} in this project.")
    trace = Trace.objects.select_related("experiment", "case").filter(project=project, trace_id=trace_id).first()
    if trace is None:
        raise NotFound(f"No run with trace_id {trace_id!r} in this project.")
    return trace


def spans_in_tree_order(trace):
    """The run's spans depth-first from the roots, siblings by start time; each with ``depth``.

    A span whose parent is missing (it may not have arrived yet), or that sits in a
    parent cycle, is shown as a root.
    """
    spans = list(trace.spans.all())
    ids = {s.span_id for s in spans}
    children = {}
    for span in spans:
        parent = span.parent_span_id if span.parent_span_id in ids else None
        children.setdefault(parent, []).append(span)
    for siblings in children.values():
        siblings.sort(key=lambda s: (s.started_at is None, s.started_at, s.position))
    ordered = []
    stack = [(span, 0) for span in reversed(children.get(None, []))]
    while stack:
        span, depth = stack.pop()
        span.depth = depth
        ordered.append(span)
        stack.extend((child, depth + 1) for child in reversed(children.get(span.span_id, [])))
    if len(ordered) < len(spans):
        placed = {id(s) for s in ordered}
        for span in spans:
            if id(span) not in placed:
                span.depth = 0
                ordered.append(span)
    return ordered
