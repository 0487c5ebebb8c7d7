"""Reads of runs, always scoped to one project (another project's run is simply not found)."""

from django.db.models import Exists, OuterRef, Q

from datasets.models import GoldenCase, Span, SpanKind, Trace
from evalsite.errors import NotFound


def trace_list(
    *,
    project,
    experiment=None,
    case=None,
    status=None,
    started_from=None,
    started_to=None,
    text=None,
    session=None,
    user=None,
    conversation=None,
):
    """The project's runs matching the filters, newest first (paginate the result).

    Filters on scores are added by ``scoring.selectors.runs_filter_by_scores``.
    """
    traces = Trace.objects.filter(project=project).select_related("experiment")
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
    if session:
        traces = traces.filter(session_id=session)
    if user:
        traces = traces.filter(user_id=user)
    if conversation:
        traces = traces.filter(conversation_id=conversation)
    if text:
        traces = traces.filter(
            Q(trace_id__icontains=text) | Q(name__icontains=text) | Q(input__icontains=text) | Q(output__icontains=text)
        )
    return traces


def trace_captured_annotate(traces):
    """Runs with a ``was_captured`` flag: some dataset of the project holds a case from it (still one query)."""
    return traces.annotate(
        was_captured=Exists(
            GoldenCase.objects.filter(dataset__project=OuterRef("project"), source_trace_id=OuterRef("trace_id"))
        ),
    )


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


def runs_answers(*, project, trace_ids):
    """``{trace_id: {"output", "status", "tool_calls": [{name, input, output, status}]}}`` of the given runs.

    Two queries whatever their number; tool calls in span order. A trace_id not in the
    project is left out.
    """
    runs = Trace.objects.filter(project=project, trace_id__in=[t for t in trace_ids if t])
    answers = {
        row["trace_id"]: {"output": row["output"], "status": row["status"], "tool_calls": [], "pk": row["pk"]}
        for row in runs.values("pk", "trace_id", "output", "status")
    }
    by_pk = {answer["pk"]: answer for answer in answers.values()}
    spans = Span.objects.filter(trace_id__in=by_pk, kind=SpanKind.TOOL).order_by("trace_id", "started_at", "position")
    for span in spans.values("trace_id", "name", "input", "output", "status"):
        by_pk[span.pop("trace_id")]["tool_calls"].append(span)
    return answers
