"""Decoding OTLP/HTTP bodies: protobuf and JSON, compressed or not, ids in hex or base64."""

import base64
import gzip
import json
import time
import zlib

import pytest
from google.protobuf import json_format
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

from datasets.otlp.decoding import body_format, request_decode
from datasets.otlp.errors import UnsupportedMediaType
from evalsite.errors import Invalid, PayloadTooLarge
from tests.datasets.test_otlp_mapping import T0, genai_agent, sdk_spans

PROTOBUF = "application/x-protobuf"
JSON = "application/json"
TRACE_HEX = "5b8efff798038103d269b633813fc60c"
SPAN_HEX = "eee19b7ec3c1b174"


def _decode(body, content_type=JSON, encoding=None, limit=10**7):
    if isinstance(body, dict):
        body = json.dumps(body).encode()
    return request_decode(body, content_type=content_type, content_encoding=encoding, limit=limit)


def _request(span=None, *, resource_attributes=None):
    span = {
        "traceId": TRACE_HEX,
        "spanId": SPAN_HEX,
        "name": "step",
        "startTimeUnixNano": str(T0),
        "endTimeUnixNano": str(T0 + 1000),
        **(span or {}),
    }
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": resource_attributes or []},
                "scopeSpans": [{"scope": {"name": "s", "version": "1"}, "spans": [span]}],
            }
        ]
    }


def test_it_decodes_what_the_sdk_protobuf_exporter_sends():
    spans = sdk_spans(genai_agent)
    decoded = _decode(encode_spans(spans).SerializeToString(), PROTOBUF)
    assert len(decoded) == 4
    assert {d.span_id for d in decoded} == {s.context.span_id.to_bytes(8, "big") for s in spans}
    root = next(d for d in decoded if not d.parent_span_id)
    assert root.name == "invoke_agent reservo"
    assert root.attributes["gen_ai.agent.name"] == "reservo"
    assert root.resource["service.name"] == "reservo"
    assert root.scope_name == "reservo.agent" and root.scope_version == "2.1.0"
    assert root.where == "resource_spans[0].scope_spans[0].spans[3]"


def test_the_json_a_protobuf_printer_writes_decodes_like_the_protobuf():
    message = encode_spans(sdk_spans(genai_agent))
    from_json = _decode(json_format.MessageToJson(message).encode())  # ids in base64
    from_protobuf = _decode(message.SerializeToString(), PROTOBUF)
    strip = [(s.trace_id, s.span_id, s.parent_span_id, s.name, s.attributes, s.start_time_unix_nano) for s in from_json]
    assert strip == [
        (s.trace_id, s.span_id, s.parent_span_id, s.name, s.attributes, s.start_time_unix_nano) for s in from_protobuf
    ]


def test_it_reads_hex_ids_as_the_otlp_json_encoding_requires():
    (span,) = _decode(_request({"parentSpanId": "AAAAAAAAAAE="}))  # parent in base64, others in hex
    assert span.trace_id.hex() == TRACE_HEX
    assert span.span_id.hex() == SPAN_HEX
    assert span.parent_span_id == b"\x00" * 7 + b"\x01"
    (upper,) = _decode(_request({"traceId": TRACE_HEX.upper()}))
    assert upper.trace_id.hex() == TRACE_HEX
    # Length decides: 16 hex digits are hex even when they could be read as base64.
    (ambiguous,) = _decode(_request({"parentSpanId": "AAAAAAAAAAAAAAAB"}))
    assert ambiguous.parent_span_id.hex() == "aaaaaaaaaaaaaaab"


def test_it_reads_64_bit_integers_as_strings_or_numbers_and_enums_as_numbers_or_names():
    (span,) = _decode(
        _request(
            {
                "startTimeUnixNano": T0,
                "endTimeUnixNano": str(T0 + 5),
                "kind": "SPAN_KIND_CLIENT",
                "status": {"code": "STATUS_CODE_ERROR", "message": "boom"},
                "attributes": [
                    {"key": "n", "value": {"intValue": "9007199254740993"}},
                    {"key": "m", "value": {"intValue": 12}},
                ],
            }
        )
    )
    assert (span.start_time_unix_nano, span.end_time_unix_nano) == (T0, T0 + 5)
    assert span.kind == "client"
    assert (span.status_code, span.status_message) == (2, "boom")
    assert span.attributes == {"n": 9007199254740993, "m": 12}
    (numeric,) = _decode(_request({"kind": 3, "status": {"code": 2}}))
    assert (numeric.kind, numeric.status_code) == ("client", 2)


def test_it_ignores_unknown_fields_and_accepts_original_field_names():
    body = _request({"futureField": {"x": 1}, "attributes": [{"key": "a", "value": {"stringValue": "b"}, "extra": 1}]})
    body["somethingNew"] = True
    (span,) = _decode(body)
    assert span.attributes == {"a": "b"}
    snake = {
        "resource_spans": [{"scope_spans": [{"spans": [{"trace_id": TRACE_HEX, "span_id": SPAN_HEX, "name": "x"}]}]}]
    }
    (span,) = _decode(snake)
    assert (span.trace_id.hex(), span.name) == (TRACE_HEX, "x")


def test_it_decodes_every_kind_of_attribute_value():
    attributes = [
        {"key": "s", "value": {"stringValue": "a\u0000b"}},
        {"key": "b", "value": {"boolValue": True}},
        {"key": "d", "value": {"doubleValue": 0.5}},
        {"key": "nan", "value": {"doubleValue": "NaN"}},
        {"key": "inf", "value": {"doubleValue": "-Infinity"}},
        {"key": "arr", "value": {"arrayValue": {"values": [{"intValue": "1"}, {"stringValue": "x"}]}}},
        {"key": "kv", "value": {"kvlistValue": {"values": [{"key": "k", "value": {"boolValue": False}}]}}},
        {"key": "bytes", "value": {"bytesValue": base64.b64encode(b"\x01\x02").decode()}},
        {"key": "empty", "value": {}},
    ]
    (span,) = _decode(_request({"attributes": attributes}))
    assert span.attributes == {
        "s": "a\ufffdb",  # NUL cannot be stored in PostgreSQL text
        "b": True,
        "d": 0.5,
        "nan": "NaN",
        "inf": "-Infinity",
        "arr": [1, "x"],
        "kv": {"k": False},
        "bytes": "AQI=",
        "empty": None,
    }


def test_a_span_with_an_unreadable_id_is_marked_and_the_others_decode():
    body = _request({"traceId": "not-an-id"})
    body["resourceSpans"][0]["scopeSpans"][0]["spans"].append({"traceId": TRACE_HEX, "spanId": "abc", "name": "second"})
    body["resourceSpans"][0]["scopeSpans"][0]["spans"].append({"traceId": TRACE_HEX, "spanId": SPAN_HEX, "name": "ok"})
    first, second, third = _decode(body)
    assert first.id_problem == "traceId 'not-an-id' is neither 32 hex digits nor the base64 of 16 bytes"
    assert second.id_problem == "spanId 'abc' is neither 16 hex digits nor the base64 of 8 bytes"
    assert third.id_problem is None and third.span_id.hex() == SPAN_HEX


@pytest.mark.parametrize("encoding", ["gzip", "GZIP", "deflate"])
def test_it_decompresses_gzip_and_deflate(encoding):
    raw = encode_spans(sdk_spans(genai_agent)).SerializeToString()
    body = gzip.compress(raw) if encoding.lower() == "gzip" else zlib.compress(raw)
    assert len(_decode(body, PROTOBUF, encoding)) == 4


def test_it_accepts_raw_deflate_and_concatenated_gzip_members():
    raw = json.dumps(_request()).encode()
    compressor = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    assert len(_decode(compressor.compress(raw) + compressor.flush(), JSON, "deflate")) == 1
    half = len(raw) // 2
    assert len(_decode(gzip.compress(raw[:half]) + gzip.compress(raw[half:]), JSON, "gzip")) == 1


def test_a_compressed_body_is_bounded_once_decompressed():
    bomb = gzip.compress(b" " * 5_000_000)  # a few kilobytes on the wire
    assert len(bomb) < 10_000
    with pytest.raises(PayloadTooLarge, match="once decompressed"):
        _decode(bomb, JSON, "gzip", limit=1_000_000)


@pytest.mark.parametrize(
    ("body", "content_type", "encoding", "message"),
    [
        (b"\xff\xff\xff", PROTOBUF, None, "not a protobuf ExportTraceServiceRequest"),
        (b"{not json", JSON, None, "not valid JSON"),
        (b"[1, 2]", JSON, None, "must be a JSON object"),
        (b'{"resourceSpans": 5}', JSON, None, "not an OTLP ExportTraceServiceRequest"),
        (
            b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"startTimeUnixNano": "soon"}]}]}]}',
            JSON,
            None,
            "not an OTLP",
        ),
        (b"not gzip at all", JSON, "gzip", "not valid gzip"),
        (gzip.compress(b"{}")[:-6], JSON, "gzip", "truncated"),
        (gzip.compress(b"{}") + b"junk", JSON, "gzip", "not valid gzip"),
    ],
)
def test_an_undecodable_body_is_invalid(body, content_type, encoding, message):
    with pytest.raises(Invalid, match=message):
        _decode(body, content_type, encoding)


@pytest.mark.parametrize(
    ("content_type", "encoding"),
    [("text/plain", None), (None, None), ("application/grpc", None), (JSON, "br")],
)
def test_other_media_types_and_encodings_are_unsupported(content_type, encoding):
    with pytest.raises(UnsupportedMediaType):
        _decode(b"{}", content_type, encoding)


def test_it_recognises_content_types_with_parameters():
    assert body_format("application/json; charset=utf-8") == "json"
    assert body_format("Application/X-Protobuf") == "protobuf"
    assert body_format("application/protobuf") == "protobuf"
    assert body_format("text/json") is None


def test_an_empty_export_has_no_spans():
    assert _decode(b"", PROTOBUF) == []
    assert _decode({}) == []
    assert _decode({"resourceSpans": [{"scopeSpans": [{}]}]}) == []


def _cpu_seconds(action):
    started = time.process_time()
    try:
        action()
    except Exception as exc:  # the answer is checked by the caller
        return time.process_time() - started, exc
    return time.process_time() - started, None


@pytest.mark.parametrize("size", [4 * 1024 * 1024, 16 * 1024 * 1024])
def test_a_body_of_many_empty_gzip_members_is_refused_in_well_under_a_second(size):
    member = gzip.compress(b"")
    bomb = member * (size // len(member))
    seconds, error = _cpu_seconds(lambda: _decode(bomb, JSON, "gzip", limit=size))
    assert isinstance(error, Invalid) and "members" in error.detail
    assert seconds < 1.0, f"{seconds:.2f} s of CPU"


def test_a_few_gzip_members_and_zero_padding_are_still_read():
    raw = json.dumps(_request()).encode()
    body = gzip.compress(b"") * 3 + gzip.compress(raw) + b"\x00" * 70_000
    assert len(_decode(body, JSON, "gzip")) == 1
