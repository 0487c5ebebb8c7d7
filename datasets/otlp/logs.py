"""Message content sent as OTLP log records, joined to the span it belongs to.

Instrumentations that follow the GenAI event conventions (``opentelemetry-instrumentation-openai-v2``
among them) put prompts and answers in log records, not on the span: one record per
message (``gen_ai.system.message``, ``gen_ai.user.message``, ``gen_ai.assistant.message``,
``gen_ai.tool.message``, ``gen_ai.choice``) or one per call
(``gen_ai.client.inference.operation.details``), each carrying the trace and span id of
the model call. A record's event name is its ``eventName`` or its ``event.name``
attribute; its body (a map, or the text alone) is read as the event's fields.

The rule, the same whichever arrives first: a span's own content wins; what it lacks
(its input messages, its output messages) is taken from the log records of that span,
in their time order. ``otel.log_content`` in the span's attributes lists what came from
records, so a later record can rebuild it. Pure: no Django, no database.
"""

from datasets.otlp.messages import (
    CHOICE_EVENT,
    COMPLETION_EVENT,
    DETAILS_EVENT,
    INPUT_EVENTS,
    PROMPT_EVENT,
    messages_from_events,
)
from datasets.otlp.records import OtlpEvent

LOG_CONTENT = "otel.log_content"
CONTENT_EVENTS = frozenset({*INPUT_EVENTS, CHOICE_EVENT, DETAILS_EVENT, PROMPT_EVENT, COMPLETION_EVENT})
_NO_MESSAGES = ("tool", "retrieval")


def log_event_name(event_name, attributes):
    """The event a log record carries: its ``eventName``, else its ``event.name`` attribute."""
    name = event_name or attributes.get("event.name") or ""
    return name.strip() if isinstance(name, str) else ""


def log_event(name, time_unix_nano, attributes, body):
    """A log record as a span event: its attributes, with its body's fields over them."""
    fields = {k: v for k, v in attributes.items() if k != "event.name"}
    if isinstance(body, dict):
        fields.update(body)
    elif isinstance(body, str) and body:
        fields.setdefault("content", body)
    return OtlpEvent(name, time_unix_nano, fields)


def content_with_logs(*, kind, input_value, output_value, attributes, events):
    """``(input, output, attributes)`` of a span once its log records (``events``) are joined.

    ``input_value`` / ``output_value`` / ``attributes`` are the span's as mapped or as
    stored; what an earlier join took from records (``LOG_CONTENT``) is taken again
    from ``events``, which are all the span's records.
    """
    taken = attributes.get(LOG_CONTENT) or []
    own_in = None if "input" in taken else input_value
    own_out = None if "output" in taken else output_value
    attributes = {k: v for k, v in attributes.items() if k != LOG_CONTENT}
    if kind in _NO_MESSAGES or not events:
        return own_in, own_out, attributes
    ordered = sorted(events, key=lambda e: e.time_unix_nano)
    inputs, outputs = messages_from_events(ordered, set())
    marks = []
    if own_in is None and inputs:
        own_in = inputs
        marks.append("input")
    if own_out is None and outputs:
        own_out = outputs
        marks.append("output")
    if marks:
        attributes[LOG_CONTENT] = marks
    return own_in, own_out, attributes
