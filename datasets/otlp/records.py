"""Plain records handed from decoding to mapping (no Django, no protobuf)."""

from dataclasses import dataclass, field


@dataclass(slots=True)
class OtlpEvent:
    name: str
    time_unix_nano: int
    attributes: dict


@dataclass(slots=True)
class OtlpSpan:
    """One span as exported, with its resource and scope; ids are raw bytes."""

    where: str  # "resourceSpans[0].scopeSpans[1].spans[2]", to name the span in messages
    trace_id: bytes
    span_id: bytes
    parent_span_id: bytes
    name: str
    kind: str | None  # "internal", "server", "client", "producer", "consumer" or None
    start_time_unix_nano: int
    end_time_unix_nano: int
    attributes: dict
    events: list = field(default_factory=list)
    links: list = field(default_factory=list)
    status_code: int = 0  # 0 unset, 1 ok, 2 error
    status_message: str = ""
    resource: dict = field(default_factory=dict)
    scope_name: str = ""
    scope_version: str = ""
    id_problem: str | None = None  # set by decoding when a JSON id was unreadable


@dataclass(slots=True)
class OtlpLog:
    """One log record as exported; ids are raw bytes (empty when the record names no span)."""

    where: str  # "resourceLogs[0].scopeLogs[0].logRecords[2]"
    trace_id: bytes
    span_id: bytes
    event_name: str
    time_unix_nano: int
    attributes: dict
    body: object
    id_problem: str | None = None
