"""A run's own fields recomputed from all of its stored spans, whatever order they came in.

- **root**: the span without a parent (the earliest-starting one if there are several;
  ties by span id). Until it arrives, the earliest-starting span whose parent is not
  stored stands in for it (a trace continued from another service has no parentless
  span at all), so a run is readable, and provisional, while its spans arrive.
- **name, input, answer, status, error** from the root: the name is the root's span
  name (an agent's or tool's name when it has one); input and answer are its
  input/output, and when those are chat messages, the text of the last user message
  and of the last assistant message. The run's status is the root's: a tool call that
  failed and that the agent recovered from does not fail the run (the ``no_errors``
  scorer still sees every failed span).
- **fallback input and answer**: when the root carries no input (or no output), the
  first user message of the first model call (``llm`` span, by start time) stands for
  the input and the last assistant message of the last model call for the answer
  (agent frameworks often record content only on the model calls).
- **times**: the root's start and end when the root has no parent; otherwise the
  earliest start and latest end of all spans. ``latency_ms`` is their difference.
- **cost_cents**: the sum of the spans' costs (``None`` when no span has one). Costs
  are reported on the spans that spend (the model calls), so summing counts each once.
  A model call whose price is unknown leaves the run's cost ``None`` (see ``costs``).
- **session_id, user_id, conversation_id**: see ``identity``.
- **usage, models_used, cost_detail**: token totals, models and how the cost was found
  (``costs.runs_usage``).
- **metadata**: the resource attributes of the root span's process (``service.name``...),
  and the root's OpenInference ``metadata`` object over them; **tags**: the root's
  OpenInference ``tag.tags`` (see ``run_attributes``).
- **experiment, case, trial**: from the root's ``evalsite.*`` attributes, else from the
  earliest span that has them (see ``linking``).
- **tool calls** the model calls asked for that no tool span records become tool spans
  first (``tool_calls``), so the run's tool checks see them.

Run inside the transaction that wrote the spans, with the runs' rows locked.
"""

from django.db.models import Count, Exists, Max, Min, OuterRef, Sum

from datasets.models import Span, SpanKind, Trace
from datasets.otlp.costs import runs_usage
from datasets.otlp.identity import runs_identity
from datasets.otlp.linking import links_resolve
from datasets.otlp.mapping import COST_CEILING_CENTS, LINK_KEYS, run_input, run_output
from datasets.otlp.messages import first_text, last_text
from datasets.otlp.run_attributes import run_metadata, run_tags
from datasets.otlp.tool_calls import tool_spans_derive


def runs_recompute(*, project, traces):
    """Recompute and save the fields of ``traces`` (locked ``Trace`` rows). Returns link warnings."""
    pks = [t.pk for t in traces]
    if not pks:
        return []
    tool_spans_derive(pks)
    totals = {
        row["trace_id"]: row
        for row in Span.objects.filter(trace_id__in=pks)
        .values("trace_id")
        .annotate(first=Min("started_at"), last=Max("ended_at"), cost=Sum("cost_cents"), costs=Count("cost_cents"))
    }
    root_pks, parentless = _roots(pks)
    roots = Span.objects.in_bulk(root_pks.values())

    links, warnings = _links(project, traces, {t.pk: roots[root_pks[t.pk]] for t in traces})
    usages = runs_usage(pks)
    identities = runs_identity({t.pk: roots[root_pks[t.pk]] for t in traces})
    fallbacks = _model_call_io(
        [t.pk for t in traces if roots[root_pks[t.pk]].input is None or roots[root_pks[t.pk]].output is None]
    )

    for trace in traces:
        root = roots[root_pks[trace.pk]]
        total = totals[trace.pk]
        if trace.pk in parentless:
            started_at, ended_at = root.started_at, root.ended_at
        else:
            started_at, ended_at = total["first"], total["last"]
        cost = total["cost"] if total["costs"] else None
        if cost is not None and cost >= COST_CEILING_CENTS:
            cost = None  # beyond what the column holds: unknown rather than wrong
        usage, models, cost_detail = usages.get(trace.pk, (None, [], None))
        if cost_detail and "unknown_price" in cost_detail:
            cost = None  # a call with no known price: unknown rather than understated
        experiment, case, trial = links.get(trace.pk, (None, None, None))
        fallback = fallbacks.get(trace.pk, (None, None))
        values = dict(
            name=root.name,
            input=run_input(root.input) if root.input is not None else fallback[0],
            output=run_output(root.output) if root.output is not None else fallback[1],
            status=root.status,
            error=root.error,
            started_at=started_at,
            ended_at=ended_at,
            latency_ms=round((ended_at - started_at).total_seconds() * 1000) if started_at and ended_at else None,
            cost_cents=cost,
            usage=usage,
            models_used=models,
            cost_detail=cost_detail,
            **identities[trace.pk],
            metadata=run_metadata(root.attributes),
            tags=run_tags(root.attributes),
            experiment=experiment,
            case=case,
            trial=trial,
        )
        Trace.objects.filter(pk=trace.pk).update(**values)
    return warnings


def _links(project, traces, roots):
    """``links_resolve`` over the roots' ``evalsite.*`` attributes, else the earliest span's."""
    hints = {}
    for trace in traces:
        attributes = roots[trace.pk].attributes
        hint = {k: attributes[k] for k in LINK_KEYS if k in attributes}
        if hint:
            hints[trace.pk] = (trace.trace_id, hint)
    unhinted = [t for t in traces if t.pk not in hints]
    if unhinted:
        hints.update(_hints_from_other_spans(unhinted))
    return links_resolve(project=project, hints=hints)


def _earliest(rows):
    """``{trace_pk: (started_at, span_id, span_pk)}``: the earliest row of each trace."""
    best = {}
    for trace_pk, started_at, span_id, span_pk in rows:
        key = (started_at, span_id, span_pk)
        if trace_pk not in best or key < best[trace_pk]:
            best[trace_pk] = key
    return best


def _roots(pks):
    """``({trace_pk: root span pk}, {trace_pks whose root has no parent})``."""
    fields = ("trace_id", "started_at", "span_id", "id")
    spans = Span.objects.filter(trace_id__in=pks)
    best = _earliest(spans.filter(parent_span_id__isnull=True).values_list(*fields))
    parentless = set(best)
    rest = [pk for pk in pks if pk not in best]
    if rest:
        stored_parent = Span.objects.filter(trace_id=OuterRef("trace_id"), span_id=OuterRef("parent_span_id"))
        best.update(_earliest(spans.filter(trace_id__in=rest).exclude(Exists(stored_parent)).values_list(*fields)))
    rest = [pk for pk in pks if pk not in best]
    if rest:  # every span's parent is stored: a cycle of parents; take the earliest span
        best.update(_earliest(spans.filter(trace_id__in=rest).values_list(*fields)))
    return {pk: row[2] for pk, row in best.items()}, parentless


def _hints_from_other_spans(traces):
    by_pk = {t.pk: t.trace_id for t in traces}
    rows = (
        Span.objects.filter(trace_id__in=list(by_pk), attributes__has_any_keys=list(LINK_KEYS))
        .values_list("trace_id", "started_at", "span_id", "attributes")
        .iterator(chunk_size=1000)
    )
    best = {}
    for trace_pk, started_at, span_id, attributes in rows:
        key = (started_at, span_id)
        if trace_pk not in best or key < best[trace_pk][0]:
            best[trace_pk] = (key, {k: attributes[k] for k in LINK_KEYS if k in attributes})
    return {pk: (by_pk[pk], hint) for pk, (_, hint) in best.items()}


def _model_call_io(pks):
    """``{trace_pk: (input, answer)}`` from the model calls of these runs (see the module docstring)."""
    if not pks:
        return {}
    calls = {}
    rows = (
        Span.objects.filter(trace_id__in=pks, kind=SpanKind.LLM)
        .order_by("trace_id", "started_at", "position", "span_id")
        .values_list("trace_id", "input", "output")
    )
    for trace_pk, value_in, value_out in rows:
        calls.setdefault(trace_pk, []).append((value_in, value_out))
    found = {}
    for trace_pk, io in calls.items():
        question = next((t for t in (first_text(i, "user") for i, _ in io) if t is not None), None)
        answer = next((t for t in (last_text(o, "assistant") for _, o in reversed(io)) if t is not None), None)
        found[trace_pk] = (question, answer)
    return found
