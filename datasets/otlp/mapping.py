"""One OpenTelemetry span into evalsite's span fields, by the GenAI and OpenInference conventions.

``span_map`` is pure (no Django, no database) and total: it returns a ``MappedSpan``
or raises ``SpanRejected`` naming why the span cannot be used (ids missing, zero or of
the wrong length; a span that is its own parent; times missing or reversed). The
mapping table is in ``docs/otel.md``; in short:

- **kind** from ``gen_ai.operation.name`` (chat, text_completion, generate_content,
  embeddings → llm; execute_tool → tool; invoke_agent, create_agent, invoke_workflow →
  agent; retrieval → retrieval), else ``openinference.span.kind`` (LLM, EMBEDDING →
  llm; TOOL → tool; RETRIEVER, RERANKER → retrieval; AGENT → agent; others → other),
  else a tool name makes it a tool and a model name an llm; otherwise other.
- **name**: a tool's name (``gen_ai.tool.name`` / ``tool.name``), an agent's name
  (``gen_ai.agent.name`` / ``agent.name``), else the span's name.
- **input / output**: tool arguments and result, retrieval query and documents, chat
  messages (see ``messages``), ``input.value`` / ``output.value``.
- **model**, **usage** (input/output/total tokens; cache and reasoning tokens apart), **cost** (``llm.cost.total`` is in
  USD; evalsite keeps cents), **status** and **error**.
- Every attribute that was not used for a field stays in ``attributes``; so do the
  span's unused events (``otel.events``), links (``otel.links``), OTel span kind
  (``otel.span_kind``), scope (``otel.scope``) and resource (``otel.resource``). The
  link attributes ``evalsite.experiment`` / ``evalsite.case`` / ``evalsite.dataset`` /
  ``evalsite.trial`` are copied from the resource when the span has none of its own.
"""

import math
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation

from datasets.otlp.messages import (
    is_message_list,
    json_lenient,
    last_text,
    messages_from_events,
    messages_from_flat,
    messages_normalise,
    system_instructions,
)
from datasets.otlp.vercel import OPERATION_ID, TOOL_NAME, vercel_io, vercel_kind

MAX_NAME = 200
MAX_MODEL = 200
LINK_KEYS = ("evalsite.experiment", "evalsite.case", "evalsite.dataset", "evalsite.trial")
OPERATION = "gen_ai.operation.name"
OPENINFERENCE_KIND = "openinference.span.kind"

_OPERATION_KINDS = {
    "chat": "llm",
    "text_completion": "llm",
    "generate_content": "llm",
    "embeddings": "llm",
    "execute_tool": "tool",
    "invoke_agent": "agent",
    "create_agent": "agent",
    "invoke_workflow": "agent",
    "retrieval": "retrieval",
}
_OPENINFERENCE_KINDS = {
    "LLM": "llm",
    "EMBEDDING": "llm",
    "TOOL": "tool",
    "RETRIEVER": "retrieval",
    "RERANKER": "retrieval",
    "AGENT": "agent",
}
_TOOL_NAMES = ("gen_ai.tool.name", "tool.name", TOOL_NAME)
_AGENT_NAMES = ("gen_ai.agent.name", "agent.name")
_MODELS = (
    "gen_ai.request.model",
    "gen_ai.response.model",
    "llm.model_name",
    "llm.request.model_name",
    "llm.response.model_name",
    "embedding.model_name",
    "ai.response.model",
    "ai.model.id",
)
PROVIDERS = ("gen_ai.provider.name", "gen_ai.system", "llm.provider", "llm.system", "ai.model.provider")
_INPUT_TOKENS = (
    "gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens", "llm.token_count.prompt", "ai.usage.inputTokens",
    "ai.usage.promptTokens",
)  # fmt: skip
_OUTPUT_TOKENS = (
    "gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens", "llm.token_count.completion",
    "ai.usage.outputTokens", "ai.usage.completionTokens",
)  # fmt: skip
_CACHE_READ_TOKENS = (
    "gen_ai.usage.cache_read.input_tokens", "gen_ai.usage.cache_read_input_tokens",
    "llm.token_count.prompt_details.cache_read", "ai.usage.cachedInputTokens",
)  # fmt: skip
_CACHE_WRITE_TOKENS = (
    "gen_ai.usage.cache_creation.input_tokens", "gen_ai.usage.cache_creation_input_tokens",
    "llm.token_count.prompt_details.cache_write",
)  # fmt: skip
_REASONING_TOKENS = ("llm.token_count.completion_details.reasoning", "gen_ai.usage.reasoning.output_tokens")
_TOTAL_TOKENS = ("llm.token_count.total", "llm.usage.total_tokens")
_CENT = Decimal("0.000001")
# Costs are stored as decimal(14, 6): below 10^8 cents. Anything larger is not a real cost.
COST_CEILING_CENTS = Decimal(10**8)
# A token count is a 64-bit integer in OTLP; a float beyond it (1e300) is not a count.
MAX_TOKENS = 2**63 - 1
_JSON_MIME = "application/json"


class SpanRejected(Exception):
    """The span cannot be used; the message says why (it is sent back to the exporter)."""


@dataclass(slots=True)
class MappedSpan:
    trace_id: str  # 32 lowercase hex digits
    span_id: str  # 16 lowercase hex digits
    parent_span_id: str | None
    kind: str
    name: str
    input: object
    output: object
    status: str
    error: str | None
    started_at: datetime
    ended_at: datetime
    latency_ms: int
    cost_cents: Decimal | None
    model: str | None
    usage: dict | None
    attributes: dict
    provider: str | None = None  # for pricing; the attribute itself stays in attributes

    def row(self):
        """The values compared with a stored copy to tell a changed re-send from a repeat."""
        return (
            self.parent_span_id, self.kind, self.name, self.input, self.output, self.status, self.error,
            self.started_at, self.ended_at, self.latency_ms, self.cost_cents, self.model, self.usage, self.attributes,
        )  # fmt: skip


def span_map(span):
    """``MappedSpan`` for an ``OtlpSpan``; raises ``SpanRejected``."""
    if span.id_problem:
        raise SpanRejected(span.id_problem)
    trace_id = _id(span.trace_id, 16, "traceId")
    span_id = _id(span.span_id, 8, "spanId")
    parent_span_id = _id(span.parent_span_id, 8, "parentSpanId") if span.parent_span_id else None
    if parent_span_id == span_id:
        raise SpanRejected(f"span {span_id} names itself as its parent")
    start, end = _times(span, span_id)

    attrs = span.attributes
    used = set()
    used_events = set()
    kind = span_kind(attrs)
    name = _name(kind, span.name, attrs, used)
    model = _model(attrs, used)
    usage = _usage(attrs, used)
    cost = _cost(attrs, used)
    input_value, output_value = _io(kind, attrs, span.events, used, used_events)
    status, error = _status(span)
    attributes = _leftover_attributes(span, used, used_events)
    return MappedSpan(
        trace_id=trace_id,
        span_id=span_id,
        parent_span_id=parent_span_id,
        kind=kind,
        name=name,
        input=input_value,
        output=output_value,
        status=status,
        error=error,
        started_at=_datetime(start),
        ended_at=_datetime(end),
        latency_ms=round((end - start) / 1_000_000),
        cost_cents=cost,
        model=model,
        usage=usage,
        attributes=attributes,
        provider=_text(next((attrs[k] for k in PROVIDERS if _text(attrs.get(k))), None)) or None,
    )


def _times(span, span_id):
    """(start, end) in Unix nanoseconds of an ended span; raises ``SpanRejected``."""
    start, end = span.start_time_unix_nano, span.end_time_unix_nano
    if not start:
        raise SpanRejected(f"span {span_id} has no startTimeUnixNano")
    if not end:
        raise SpanRejected(f"span {span_id} has no endTimeUnixNano (only ended spans are accepted)")
    if end < start:
        raise SpanRejected(f"span {span_id} ends before it starts")
    return start, end


def _leftover_attributes(span, used, used_events):
    """What the span carries beyond the mapped fields, kept under its attributes."""
    attributes = {k: v for k, v in span.attributes.items() if k not in used}
    for key in LINK_KEYS:
        if key not in attributes and span.resource.get(key) is not None:
            attributes[key] = span.resource[key]
    if span.kind:
        attributes["otel.span_kind"] = span.kind
    if span.scope_name or span.scope_version:
        attributes["otel.scope"] = {"name": span.scope_name, "version": span.scope_version}
    if span.resource:
        attributes["otel.resource"] = span.resource
    events = [_event_out(e) for i, e in enumerate(span.events) if i not in used_events]
    if events:
        attributes["otel.events"] = events
    if span.links:
        attributes["otel.links"] = span.links
    return attributes


def span_kind(attrs):
    """evalsite's kind for a span's attributes (see the module docstring)."""
    operation = str(attrs.get(OPERATION) or "").strip().lower()
    if operation in _OPERATION_KINDS:
        return _OPERATION_KINDS[operation]
    vercel = vercel_kind(attrs)
    if vercel:
        return vercel
    openinference = str(attrs.get(OPENINFERENCE_KIND) or "").strip().upper()
    if openinference:
        return _OPENINFERENCE_KINDS.get(openinference, "other")
    if any(_text(attrs.get(k)) for k in _TOOL_NAMES):
        return "tool"
    if any(_text(attrs.get(k)) for k in _MODELS):
        return "llm"
    return "other"


def run_input(value):
    """A run's input from its root span's input: the last user message's text, if it is messages."""
    if is_message_list(value):
        text = last_text(value, "user")
        return value if text is None else text
    return value


def run_output(value):
    """A run's answer from its root span's output: the last assistant message's text, if it is messages."""
    if is_message_list(value):
        text = last_text(value, "assistant")
        return value if text is None else text
    return value


def _id(raw, size, name):
    if len(raw) != size:
        if not raw:
            raise SpanRejected(f"{name} is missing")
        raise SpanRejected(f"{name} {raw.hex()} is {len(raw)} bytes; it must be {size} ({2 * size} hex digits)")
    if not any(raw):
        raise SpanRejected(f"{name} is all zeros (an invalid id)")
    return raw.hex()


def _datetime(nanos):
    seconds, rest = divmod(nanos, 1_000_000_000)
    return datetime.fromtimestamp(seconds, tz=UTC).replace(microsecond=rest // 1000)


def _text(value):
    return value.strip() if isinstance(value, str) else ""


def _take_text(attrs, keys, used):
    for key in keys:
        text = _text(attrs.get(key))
        if text:
            used.add(key)
            return text
    return None


def _name(kind, span_name, attrs, used):
    name = None
    if kind == "tool":
        name = _take_text(attrs, _TOOL_NAMES, used) or span_name.removeprefix("execute_tool ")
    elif kind == "agent":
        name = _take_text(attrs, _AGENT_NAMES, used)
        if not name:
            for prefix in ("invoke_agent ", "create_agent "):
                span_name = span_name.removeprefix(prefix)
            name = span_name
    return (name or span_name)[:MAX_NAME]


def _model(attrs, used):
    model = _take_text(attrs, _MODELS, used)
    return model[:MAX_MODEL] if model else None


def _count(value):
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int) and 0 <= value <= MAX_TOKENS:
        return value
    return None


def _take_count(attrs, keys, used):
    for key in keys:
        count = _count(attrs.get(key))
        if count is not None:
            used.add(key)
            return count
    return None


def _usage(attrs, used):
    usage = {}
    for field, keys in (("input_tokens", _INPUT_TOKENS), ("output_tokens", _OUTPUT_TOKENS)):
        count = _take_count(attrs, keys, used)
        if count is not None:
            usage[field] = count
    total = _take_count(attrs, _TOTAL_TOKENS, used)
    if total is None and usage:
        total = _count(sum(usage.values()))
    # Cached tokens are part of the input tokens, reasoning tokens of the output tokens:
    # counted apart, not added to the total.
    for field, keys in (
        ("cache_read_tokens", _CACHE_READ_TOKENS),
        ("cache_write_tokens", _CACHE_WRITE_TOKENS),
        ("reasoning_tokens", _REASONING_TOKENS),
    ):
        count = _take_count(attrs, keys, used)
        if count is not None:
            usage[field] = count
    if total is not None:
        usage["total_tokens"] = total
    return usage or None


def _amount(value):
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    try:
        return Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
    except InvalidOperation:
        return None


def _cost(attrs, used):
    """Cents: ``evalsite.cost_cents`` as sent, else ``llm.cost.*`` (USD) times 100."""
    cents = _amount(attrs.get("evalsite.cost_cents"))
    keys = ["evalsite.cost_cents"]
    if cents is None:
        keys = ["gen_ai.usage.cost"]
        usd = _amount(attrs.get("gen_ai.usage.cost"))
        if usd is None:
            usd = _amount(attrs.get("llm.cost.total"))
            keys = ["llm.cost.total"]
        if usd is None:
            parts = [_amount(attrs.get(k)) for k in ("llm.cost.prompt", "llm.cost.completion")]
            if any(p is not None for p in parts):
                usd = sum((p for p in parts if p is not None), Decimal(0))
                keys = ["llm.cost.prompt", "llm.cost.completion"]
        cents = None if usd is None else usd * 100
    if cents is None or cents < 0 or cents >= COST_CEILING_CENTS:
        return None  # unusable: the attributes stay on the span as sent
    cents = cents.quantize(_CENT)
    if cents >= COST_CEILING_CENTS:
        return None
    used.update(keys)
    return cents


def _plain(attrs, prefix, used):
    """OpenInference ``input.value`` / ``output.value``, parsed when its MIME type says JSON."""
    key, mime_key = f"{prefix}.value", f"{prefix}.mime_type"
    if attrs.get(key) is None:
        return None
    used.add(key)
    if mime_key in attrs:
        used.add(mime_key)
    mime = str(attrs.get(mime_key) or "").strip().lower()
    return json_lenient(attrs[key], containers_only=mime != _JSON_MIME)


def _messages(attrs, events, used, used_events):
    inputs = messages_normalise(attrs.get("gen_ai.input.messages"))
    if inputs:
        used.add("gen_ai.input.messages")
    outputs = messages_normalise(attrs.get("gen_ai.output.messages"), default_role="assistant")
    if outputs:
        used.add("gen_ai.output.messages")
    system = system_instructions(attrs.get("gen_ai.system_instructions"))
    if system and inputs:
        used.add("gen_ai.system_instructions")
        inputs = [system, *inputs]
    if not inputs or not outputs:
        event_in, event_out = messages_from_events(events, used_events)
        inputs, outputs = inputs or event_in, outputs or event_out
    if not inputs and attrs.get("gen_ai.prompt") is not None:
        inputs = messages_normalise(attrs["gen_ai.prompt"])
        used.add("gen_ai.prompt")
    if not outputs and attrs.get("gen_ai.completion") is not None:
        outputs = messages_normalise(attrs["gen_ai.completion"], default_role="assistant")
        used.add("gen_ai.completion")
    inputs = inputs or messages_from_flat(attrs, "gen_ai.prompt", used, openinference=False)
    outputs = outputs or messages_from_flat(attrs, "gen_ai.completion", used, openinference=False)
    inputs = inputs or messages_from_flat(attrs, "llm.input_messages", used, openinference=True)
    outputs = outputs or messages_from_flat(attrs, "llm.output_messages", used, openinference=True)
    return inputs, outputs


def _io(kind, attrs, events, used, used_events):
    if kind == "tool":
        value_in = _take_json(attrs, "gen_ai.tool.call.arguments", used)
        value_out = _take_json(attrs, "gen_ai.tool.call.result", used)
    elif kind == "retrieval":
        value_in = _take_json(attrs, "gen_ai.retrieval.query.text", used)
        value_out = _take_json(attrs, "gen_ai.retrieval.documents", used)
        if value_out is None:
            value_out = _documents(attrs, used)
    else:
        value_in, value_out = _messages(attrs, events, used, used_events)
    if (value_in is None or value_out is None) and OPERATION_ID in attrs:
        vercel_in, vercel_out = vercel_io(kind, attrs, used)
        value_in = vercel_in if value_in is None else value_in
        value_out = vercel_out if value_out is None else value_out
    if value_in is None:
        value_in = _plain(attrs, "input", used)
    if value_out is None:
        value_out = _plain(attrs, "output", used)
    return value_in, value_out


def _take_json(attrs, key, used):
    if attrs.get(key) is None:
        return None
    used.add(key)
    return json_lenient(attrs[key])


def _documents(attrs, used):
    """OpenInference ``retrieval.documents.N.document.{id,content,score,metadata}`` as a list."""
    rows = {}
    start = "retrieval.documents."
    for key, value in attrs.items():
        if key.startswith(start):
            head, _, rest = key[len(start) :].partition(".")
            if head.isdigit() and rest.startswith("document."):
                rows.setdefault(int(head), {})[rest.removeprefix("document.")] = json_lenient(value)
                used.add(key)
    return [row for _, row in sorted(rows.items())] or None


def _status(span):
    if span.status_code != 2:
        return "ok", None
    message = span.status_message.strip()
    if not message:
        for event in span.events:
            if event.name == "exception":
                kind = _text(event.attributes.get("exception.type"))
                text = _text(event.attributes.get("exception.message"))
                message = ": ".join(p for p in (kind, text) if p)
                if message:
                    break
    if not message:
        message = _text(span.attributes.get("error.type"))
    return "error", message or None


def _event_out(event):
    out = {"name": event.name, "time": _datetime(event.time_unix_nano).isoformat() if event.time_unix_nano else None}
    if event.attributes:
        out["attributes"] = event.attributes
    return out
