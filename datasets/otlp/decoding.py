"""An OTLP/HTTP trace export body, decoded into plain ``OtlpSpan`` records.

Accepted, as the OTLP/HTTP specification asks:

- ``Content-Type: application/x-protobuf`` (an ``ExportTraceServiceRequest``) or
  ``application/json`` (its JSON mapping);
- ``Content-Encoding: gzip``, ``deflate`` or none. The decompressed body is bounded by
  the same limit as the body itself, so a small compressed bomb is a 413, not an
  exhausted worker;
- in JSON: ids as hex (what the specification says) or base64 (what a generic
  protobuf JSON printer writes), 64-bit integers as strings or numbers, enums as
  numbers or names, lowerCamelCase or original field names; unknown fields ignored.

A body that cannot be decoded raises ``Invalid`` (400); nothing of it is used. One span
whose JSON ids are unreadable does not spoil the others: its ``id_problem`` says why,
and the mapping rejects that span alone.

Strings lose their NUL characters (neither PostgreSQL text nor JSON columns can hold
them) and non-finite doubles become the strings ``"NaN"``, ``"Infinity"``,
``"-Infinity"`` (JSON has no such numbers), so every decoded value can be stored and
read back unchanged.
"""

import base64
import binascii
import math
import zlib
from dataclasses import dataclass

from google.protobuf import json_format
from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from datasets.otlp.errors import UnsupportedMediaType
from datasets.otlp.records import OtlpEvent, OtlpSpan
from evalsite.errors import Invalid, PayloadTooLarge
from evalsite.json_input import DEPTH_MESSAGE, JSON_MAX_DEPTH, json_read

PROTOBUF = "protobuf"
JSON = "json"
_MEDIA_TYPES = {
    "application/x-protobuf": PROTOBUF,
    "application/protobuf": PROTOBUF,
    "application/json": JSON,
}
_TRACE_ID_BYTES = 16
_SPAN_ID_BYTES = 8
MAX_GZIP_MEMBERS = 100
_FEED = 64 * 1024
_SPAN_KINDS = {1: "internal", 2: "server", 3: "client", 4: "producer", 5: "consumer"}


def body_format(content_type):
    """``"protobuf"``, ``"json"`` or ``None`` for a Content-Type header value."""
    media_type = (content_type or "").split(";", 1)[0].strip().lower()
    return _MEDIA_TYPES.get(media_type)


def request_decode(body, *, content_type, content_encoding, limit):
    """The spans of an export body, in the order they were sent.

    Raises ``UnsupportedMediaType`` (415) for another content type or encoding,
    ``PayloadTooLarge`` (413) when the decompressed body exceeds ``limit`` bytes and
    ``Invalid`` (400) when the body cannot be decoded.
    """
    kind = body_format(content_type)
    if kind is None:
        raise UnsupportedMediaType(
            f"Content-Type {content_type or '(none)'!r} is not accepted; send application/x-protobuf or application/json."
        )
    body = body_decompress(body, content_encoding, limit)
    message = _protobuf_parse(body) if kind == PROTOBUF else _json_parse(body)
    return list(_spans(message, kind))


def body_decompress(body, content_encoding, limit):
    encoding = (content_encoding or "identity").strip().lower()
    if encoding in ("identity", ""):
        return body
    if encoding == "gzip":
        return _inflate(body, limit, wbits=16 + zlib.MAX_WBITS, name="gzip")
    if encoding == "deflate":
        # "deflate" is the zlib format (RFC 9110); a few clients send the raw stream.
        try:
            return _inflate(body, limit, wbits=zlib.MAX_WBITS, name="deflate")
        except Invalid:
            return _inflate(body, limit, wbits=-zlib.MAX_WBITS, name="deflate")
    raise UnsupportedMediaType(f"Content-Encoding {content_encoding!r} is not accepted; send gzip, deflate or none.")


def _inflate(body, limit, *, wbits, name):
    """``body`` inflated, in time and memory bounded by its size and ``limit``.

    The input is fed in slices of ``_FEED`` bytes, so starting a new gzip member copies
    at most a slice (not the rest of the body), and a body of more than ``MAX_GZIP_MEMBERS``
    members is refused: a few kilobytes of empty members cost no more than one.
    """
    out = bytearray()
    inflater, members, position, data = zlib.decompressobj(wbits), 1, 0, b""
    try:
        while True:
            if not data:
                if position >= len(body):
                    raise Invalid(f"The {name} body is truncated.")
                data, position = body[position : position + _FEED], position + _FEED
            # max_length stops inflating one byte past the limit: a bomb costs no memory.
            out += inflater.decompress(data, limit + 1 - len(out))
            if len(out) > limit:
                raise PayloadTooLarge(
                    f"The body is over the limit of {limit} bytes once decompressed (EVALSITE_MAX_BODY_BYTES)."
                )
            if not inflater.eof:
                data = b""
                continue
            data = inflater.unused_data
            if not data and position >= len(body):
                return bytes(out)
            if data and not data.strip(b"\x00"):
                # Zero padding after the end is tolerated; looked at once, then done.
                if not body[position:].strip(b"\x00"):
                    return bytes(out)
                raise Invalid(f"The body is not valid {name}: zero bytes between members.")
            members += 1
            if name != "gzip" or members > MAX_GZIP_MEMBERS:
                raise Invalid(_after_end_message(name))
            # gzip allows several members one after another (RFC 1952).
            inflater = zlib.decompressobj(wbits)
    except zlib.error as exc:
        raise Invalid(f"The body is not valid {name}: {exc}.") from None


def _after_end_message(name):
    if name == "gzip":
        return f"The gzip body has more than {MAX_GZIP_MEMBERS} members; send one (or a few)."
    return f"The {name} body has bytes after its end."


def _protobuf_parse(body):
    try:
        return ExportTraceServiceRequest.FromString(body)
    except (DecodeError, RecursionError, ValueError) as exc:
        raise Invalid(f"The body is not a protobuf ExportTraceServiceRequest: {exc or 'undecodable'}.") from None


def _json_parse(body):
    payload = json_read(body, nul=False)  # NUL characters are replaced below
    if not isinstance(payload, dict):
        raise Invalid("The body must be a JSON object (an ExportTraceServiceRequest).")
    problems = _json_ids_normalise(payload)
    message = ExportTraceServiceRequest()
    try:
        json_format.ParseDict(payload, message, ignore_unknown_fields=True)
    except (json_format.ParseError, RecursionError, ValueError, TypeError) as exc:
        raise Invalid(f"The body is not an OTLP ExportTraceServiceRequest: {exc}.") from None
    return _JsonMessage(message, problems)


@dataclass(slots=True)
class _JsonMessage:
    message: ExportTraceServiceRequest
    problems: dict


def json_items(container, *names):
    if not isinstance(container, dict):
        return []
    for name in names:
        value = container.get(name)
        if isinstance(value, list):
            return value
    return []


def json_objects(container, *names, where, message="ExportTraceServiceRequest"):
    """``json_items``, which must be an array of JSON objects (the protobuf parser would skip the rest)."""
    not_otlp = f"The body is not an OTLP {message}: "
    if isinstance(container, dict):
        for name in names:
            if name in container and not isinstance(container[name], list):
                field = f"{where}{name}"
                raise Invalid(
                    not_otlp + f"{field} must be an array.", errors=[{"field": field, "message": "must be an array"}]
                )
    items = json_items(container, *names)
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            field = f"{where}{names[0]}[{index}]"
            raise Invalid(
                not_otlp + f"{field} must be an object.", errors=[{"field": field, "message": "must be an object"}]
            )
    return items


_SPAN_IDS = (
    ("traceId", "trace_id", _TRACE_ID_BYTES),
    ("spanId", "span_id", _SPAN_ID_BYTES),
    ("parentSpanId", "parent_span_id", _SPAN_ID_BYTES),
)
_LINK_IDS = (("traceId", "trace_id", _TRACE_ID_BYTES), ("spanId", "span_id", _SPAN_ID_BYTES))


def _json_ids_normalise(payload):
    """Rewrite JSON ids in place as base64 (what the protobuf parser reads).

    Returns ``{(resource, scope, span): problem}`` for spans whose ids are neither hex
    nor base64 of the right length; their ids are blanked so the rest still parses.
    """
    problems = {}
    for r, resource_spans in enumerate(json_objects(payload, "resourceSpans", "resource_spans", where="")):
        where = f"resourceSpans[{r}]."
        for s, scope_spans in enumerate(json_objects(resource_spans, "scopeSpans", "scope_spans", where=where)):
            for i, span in enumerate(json_objects(scope_spans, "spans", where=f"{where}scopeSpans[{s}].")):
                for camel, snake, size in _SPAN_IDS:
                    for key in (camel, snake):
                        if key in span:
                            span[key], problem = json_id(span[key], camel, size)
                            if problem and (r, s, i) not in problems:
                                problems[(r, s, i)] = problem
                for link in json_items(span, "links"):
                    if isinstance(link, dict):
                        for camel, snake, size in _LINK_IDS:
                            for key in (camel, snake):
                                if key in link:
                                    # A bad link id loses the link, not the span.
                                    link[key], _ = json_id(link[key], camel, size)
    return problems


def json_id(value, name, size):
    if not isinstance(value, str):
        return value, None  # the protobuf parser names the wrong type
    text = value.strip()
    if not text:
        return "", None
    if len(text) == 2 * size:
        try:
            return base64.b64encode(bytes.fromhex(text)).decode(), None
        except ValueError:
            pass
    raw = _base64_decode(text)
    if raw is not None and len(raw) == size:
        return base64.b64encode(raw).decode(), None
    return "", f"{name} {_preview(value)} is neither {2 * size} hex digits nor the base64 of {size} bytes"


def _base64_decode(text):
    padded = text + "=" * (-len(text) % 4)
    for altchars in (None, b"-_"):
        try:
            return base64.b64decode(padded, altchars=altchars, validate=True)
        except (binascii.Error, ValueError):
            continue
    return None


def _preview(value, limit=60):
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _spans(message, kind):
    problems = {}
    if isinstance(message, _JsonMessage):
        message, problems = message.message, message.problems
    resource_key, scope_key = ("resourceSpans", "scopeSpans") if kind == JSON else ("resource_spans", "scope_spans")
    for r, resource_spans in enumerate(message.resource_spans):
        resource = attributes_decode(
            resource_spans.resource.attributes, where=f"{resource_key}[{r}].resource.attributes"
        )
        for s, scope_spans in enumerate(resource_spans.scope_spans):
            scope = scope_spans.scope
            for i, span in enumerate(scope_spans.spans):
                where = f"{resource_key}[{r}].{scope_key}[{s}].spans[{i}]"
                yield OtlpSpan(
                    where=where,
                    trace_id=span.trace_id,
                    span_id=span.span_id,
                    parent_span_id=span.parent_span_id,
                    name=_text(span.name),
                    kind=_SPAN_KINDS.get(span.kind),
                    start_time_unix_nano=span.start_time_unix_nano,
                    end_time_unix_nano=span.end_time_unix_nano,
                    attributes=attributes_decode(span.attributes, where=f"{where}.attributes"),
                    events=[
                        OtlpEvent(
                            _text(e.name),
                            e.time_unix_nano,
                            attributes_decode(e.attributes, where=f"{where}.events[{n}]"),
                        )
                        for n, e in enumerate(span.events)
                    ],
                    links=[
                        {"trace_id": link.trace_id.hex(), "span_id": link.span_id.hex()}
                        for link in span.links
                        if len(link.trace_id) == _TRACE_ID_BYTES and len(link.span_id) == _SPAN_ID_BYTES
                    ],
                    status_code=span.status.code,
                    status_message=_text(span.status.message),
                    resource=resource,
                    scope_name=_text(scope.name),
                    scope_version=_text(scope.version),
                    id_problem=problems.get((r, s, i)),
                )


def attributes_decode(key_values, depth=0, where="attributes"):
    """OTLP ``KeyValue`` list as a dict.

    Raises ``Invalid`` when values nest deeper than ``JSON_MAX_DEPTH`` levels (what is
    stored must stay within the limit every JSON entry point keeps), and when a list
    names one key twice, naming it, as a JSON object holding a key twice is refused
    (the OpenTelemetry data model wants keys unique; which value would win is the
    sender's whim). ``where`` names the list in the answer.
    """
    if depth >= JSON_MAX_DEPTH:
        raise Invalid(
            f"An attribute value {DEPTH_MESSAGE}.", errors=[{"field": "attributes", "message": DEPTH_MESSAGE}]
        )
    decoded = {}
    for kv in key_values:
        key = _text(kv.key)
        if key in decoded:
            message = f"holds the key {key!r} twice; send each key once"
            raise Invalid(f"{where} {message}.", errors=[{"field": where, "message": message}])
        decoded[key] = any_value_decode(kv.value, depth + 1, where=f"{where}.{key}")
    return decoded


def any_value_decode(value, depth=0, where="attributes"):
    """An OTLP ``AnyValue`` as a JSON-safe Python value (``None`` when empty)."""
    which = value.WhichOneof("value")
    if which == "string_value":
        return _text(value.string_value)
    if which == "bool_value":
        return value.bool_value
    if which == "int_value":
        return value.int_value
    if which == "double_value":
        number = value.double_value
        if math.isfinite(number):
            return number
        return "NaN" if math.isnan(number) else ("Infinity" if number > 0 else "-Infinity")
    if which == "array_value":
        if depth >= JSON_MAX_DEPTH:
            raise Invalid(
                f"An attribute value {DEPTH_MESSAGE}.", errors=[{"field": "attributes", "message": DEPTH_MESSAGE}]
            )
        return [any_value_decode(v, depth + 1, where=f"{where}[{n}]") for n, v in enumerate(value.array_value.values)]
    if which == "kvlist_value":
        return attributes_decode(value.kvlist_value.values, depth, where=where)
    if which == "bytes_value":
        return base64.b64encode(value.bytes_value).decode()
    return None


def _text(value):
    return value.replace("\x00", "\ufffd") if "\x00" in value else value
