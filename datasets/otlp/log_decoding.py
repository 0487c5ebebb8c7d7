"""An OTLP/HTTP logs export body, decoded into plain ``OtlpLog`` records.

The same rules as spans (``decoding``): protobuf (``ExportLogsServiceRequest``) or its
JSON mapping, gzip/deflate or none, the decompressed size bounded, ids in hex or base64
in JSON. A body that cannot be decoded raises ``Invalid`` (400); one record whose ids
are unreadable is rejected alone.
"""

import functools

from google.protobuf import json_format
from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

from datasets.otlp.decoding import (
    JSON,
    PROTOBUF,
    any_value_decode,
    attributes_decode,
    body_decompress,
    body_format,
    json_id,
    json_objects,
)
from datasets.otlp.errors import UnsupportedMediaType
from datasets.otlp.records import OtlpLog
from evalsite.errors import Invalid
from evalsite.json_input import json_read

_LOG_IDS = (("traceId", "trace_id", 16), ("spanId", "span_id", 8))


def logs_request_decode(body, *, content_type, content_encoding, limit):
    """The log records of an export body, in the order they were sent (see the module docstring)."""
    kind = body_format(content_type)
    if kind is None:
        raise UnsupportedMediaType(
            f"Content-Type {content_type or '(none)'!r} is not accepted; send application/x-protobuf or application/json."
        )
    body = body_decompress(body, content_encoding, limit)
    if kind == PROTOBUF:
        try:
            message, problems = ExportLogsServiceRequest.FromString(body), {}
        except (DecodeError, RecursionError, ValueError) as exc:
            raise Invalid(f"The body is not a protobuf ExportLogsServiceRequest: {exc or 'undecodable'}.") from None
    else:
        message, problems = _json_parse(body)
    return list(_logs(message, problems, kind))


def _json_parse(body):
    payload = json_read(body, nul=False)  # strings lose their NUL characters when decoded
    if not isinstance(payload, dict):
        raise Invalid("The body must be a JSON object (an ExportLogsServiceRequest).")
    problems = {}
    objects = functools.partial(json_objects, message="ExportLogsServiceRequest")
    for r, resource_logs in enumerate(objects(payload, "resourceLogs", "resource_logs", where="")):
        where = f"resourceLogs[{r}]."
        for s, scope_logs in enumerate(objects(resource_logs, "scopeLogs", "scope_logs", where=where)):
            for i, record in enumerate(
                objects(scope_logs, "logRecords", "log_records", where=f"{where}scopeLogs[{s}].")
            ):
                for camel, snake, size in _LOG_IDS:
                    for key in (camel, snake):
                        if key in record:
                            record[key], problem = json_id(record[key], camel, size)
                            if problem:
                                problems.setdefault((r, s, i), problem)
    message = ExportLogsServiceRequest()
    try:
        json_format.ParseDict(payload, message, ignore_unknown_fields=True)
    except (json_format.ParseError, RecursionError, ValueError, TypeError) as exc:
        raise Invalid(f"The body is not an OTLP ExportLogsServiceRequest: {exc}.") from None
    return message, problems


def _logs(message, problems, kind):
    names = (
        ("resourceLogs", "scopeLogs", "logRecords") if kind == JSON else ("resource_logs", "scope_logs", "log_records")
    )
    for r, resource_logs in enumerate(message.resource_logs):
        for s, scope_logs in enumerate(resource_logs.scope_logs):
            for i, record in enumerate(scope_logs.log_records):
                where = f"{names[0]}[{r}].{names[1]}[{s}].{names[2]}[{i}]"
                yield OtlpLog(
                    where=where,
                    trace_id=record.trace_id,
                    span_id=record.span_id,
                    event_name=record.event_name.replace("\x00", ""),
                    time_unix_nano=record.time_unix_nano or record.observed_time_unix_nano,
                    attributes=attributes_decode(record.attributes, where=f"{where}.attributes"),
                    body=any_value_decode(record.body) if record.HasField("body") else None,
                    id_problem=problems.get((r, s, i)),
                )
