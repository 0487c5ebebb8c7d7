"""Tool calls that a run's model calls asked for, as tool spans, when the run records none of its own.

An instrumented model client (``opentelemetry-instrumentation-openai-v2``,
``openinference-instrumentation-openai``) sees the model ask for a tool (a ``tool_call``
part in a call's output messages, with its arguments) and the agent hand the result
back (a ``tool_call_response`` part with the same id in a later call's input messages);
the tool itself runs in the agent's code, in no span. The tool checks read spans of
kind ``tool``, so each such call becomes one, derived from the model calls:

- **name, input**: the tool asked for and its arguments;
- **output**: the response with the call's id in a later model call of the same run
  (``None`` when none came: a bare model call is a run of its own, and its tool's
  result goes to the next call, another run);
- **parent**: the model call's parent (the agent), or the model call when it has none;
- **times**: from the end of the model call that asked to the start of the call that
  carried the result (the same instant when none did);
- **span_id**: ``<model call's span id>:tool_call:<n>``, never an OTLP span id (16 hex
  digits), so no exported span can take it; ``attributes``: ``evalsite.derived_from``
  (the model call's span id) and ``gen_ai.tool.call.id``.

A call the run records itself is not derived: one whose id a tool span carries
(``gen_ai.tool.call.id``, ``tool_call.id``, ``ai.toolCall.id``), else one answered by a
tool span of the same name that carries no matching id (each tool span answers one call,
in start order).

``tool_spans_derive`` runs with the run's recomputation (``runs``), from all of its stored
spans, so the derived spans follow the model calls whatever order they arrive in.
"""

from django.db.models import Q

from datasets.models import Span, SpanKind
from datasets.otlp.mapping import MAX_NAME
from datasets.otlp.messages import is_message_list, json_lenient

MARK = ":tool_call:"
DERIVED_FROM = "evalsite.derived_from"
CALL_ID = "gen_ai.tool.call.id"
_CALL_IDS = (CALL_ID, "tool_call.id", "ai.toolCall.id")
_FIELDS = ("id", "trace_id", "span_id", "parent_span_id", "kind", "name", "started_at", "ended_at", "attributes")


def is_derived(span_id):
    """Whether ``span_id`` names a tool span derived here (not one an exporter sent)."""
    return MARK in span_id


def tool_spans_derive(pks):
    """Bring the derived tool spans of the runs ``pks`` in line with their model calls."""
    if not pks:
        return
    calls, tools = {}, {}
    rows = (
        Span.objects.filter(trace_id__in=pks)
        .filter(Q(kind=SpanKind.LLM) | Q(kind=SpanKind.TOOL))
        .exclude(span_id__contains=MARK)
        .order_by("started_at", "position", "span_id")
        .values_list(*_FIELDS, "output")
    )
    for row in rows:
        span = dict(zip((*_FIELDS, "output"), row, strict=True))
        (calls if span["kind"] == SpanKind.LLM else tools).setdefault(span["trace_id"], []).append(span)
    derived = {}
    for span in Span.objects.filter(trace_id__in=pks, span_id__contains=MARK):
        derived.setdefault(span.trace_id, []).append(span)
    wanted = {}
    for pk, model_calls in calls.items():
        asked = _uncovered(_requested(model_calls), tools.get(pk, []))
        if asked:
            wanted[pk] = asked
    answers = _answers(wanted)
    rows_new, stale = [], []
    for pk in pks:
        want = {s.span_id: s for s in (_tool_span(pk, call, answers.get(pk, [])) for call in wanted.get(pk, []))}
        for old in derived.get(pk, []):
            new = want.get(old.span_id)
            if new is not None and _row(old) == _row(new):
                del want[old.span_id]
            else:
                stale.append(old.pk)
        rows_new += want.values()
    if stale:
        Span.objects.filter(pk__in=stale).delete()
    if rows_new:
        Span.objects.bulk_create(rows_new)


def _requested(model_calls):
    """``[(model call, index, tool_call part)]``: the tool calls the model calls asked for, in order."""
    asked = []
    for call in model_calls:
        output = call["output"]
        if not is_message_list(output):
            continue
        parts = [p for m in output for p in m["parts"] if isinstance(p, dict) and p.get("type") == "tool_call"]
        asked += [(call, n, part) for n, part in enumerate(parts)]
    return asked


def _call_id(value):
    return value.strip() if isinstance(value, str) and value.strip() else None


def _uncovered(asked, tools):
    """The calls of ``asked`` that no tool span of the run records (see the module docstring)."""
    by_id = {}
    for tool in tools:
        call_id = next((i for i in (_call_id(tool["attributes"].get(k)) for k in _CALL_IDS) if i), None)
        if call_id:
            by_id.setdefault(call_id, []).append(tool)
    left = []
    used = set()
    for item in asked:
        matches = by_id.get(_call_id(item[2].get("id")) or "", [])
        match = next((t for t in matches if t["id"] not in used), None)
        if match is not None:
            used.add(match["id"])
        else:
            left.append(item)
    pool = [t for t in tools if t["id"] not in used]
    uncovered = []
    for item in left:
        match = next((t for t in pool if t["name"] == _name(item[2])), None)
        if match is not None:
            pool.remove(match)
        else:
            uncovered.append(item)
    return uncovered


def _answers(wanted):
    """``{trace pk: [(started_at, {call id: response})]}``: tool results in the model calls' inputs, in order."""
    if not wanted:
        return {}
    rows = (
        Span.objects.filter(trace_id__in=list(wanted), kind=SpanKind.LLM)
        .order_by("started_at", "position", "span_id")
        .values_list("trace_id", "span_id", "started_at", "input")
    )
    found = {}
    for trace_pk, span_id, started_at, value in rows:
        if is_derived(span_id) or not is_message_list(value):
            continue
        responses = {}
        for message in value:
            for part in message["parts"]:
                if isinstance(part, dict) and part.get("type") == "tool_call_response" and _call_id(part.get("id")):
                    responses.setdefault(_call_id(part["id"]), part.get("response"))
        if responses:
            found.setdefault(trace_pk, []).append((started_at, responses))
    return found


def _name(part):
    name = part.get("name")
    return (name.strip() if isinstance(name, str) and name.strip() else "tool")[:MAX_NAME]


def _after(at, start):
    return at is not None and start is not None and at >= start


def _tool_span(trace_pk, item, answers):
    call, index, part = item
    call_id = _call_id(part.get("id"))
    output, ended_at = None, call["ended_at"]
    if call_id:
        later = ((at, r[call_id]) for at, r in answers if call_id in r and _after(at, call["started_at"]))
        found = next(later, None)
        if found is not None:
            ended_at = max(found[0], call["ended_at"]) if call["ended_at"] else found[0]
            output = json_lenient(found[1])
    attributes = {DERIVED_FROM: call["span_id"]}
    if call_id:
        attributes[CALL_ID] = call_id
    started_at = call["ended_at"]
    return Span(
        trace_id=trace_pk,
        span_id=f"{call['span_id']}{MARK}{index}",
        parent_span_id=call["parent_span_id"] or call["span_id"],
        kind=SpanKind.TOOL,
        name=_name(part),
        input=json_lenient(part.get("arguments")),
        output=output,
        started_at=started_at,
        ended_at=ended_at,
        latency_ms=round((ended_at - started_at).total_seconds() * 1000) if started_at and ended_at else None,
        attributes=attributes,
    )


def _row(span):
    return (
        span.parent_span_id, span.name, span.input, span.output, span.started_at, span.ended_at, span.latency_ms,
        span.attributes,
    )  # fmt: skip
