"""``POST /v1/logs``: message content sent as OTLP log records joins its span, before or after it.

The spans and log records are made by the OpenTelemetry SDK and encoded by its OTLP
encoders, shaped as ``opentelemetry-instrumentation-openai-v2`` sends them with
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true``: a ``chat`` span with the
model and tokens, and one log record per message (``gen_ai.system.message``,
``gen_ai.user.message``, ``gen_ai.choice``...) carrying the span's trace and span id.
"""

import base64
import gzip
import json
import threading

import pytest
from django.db import connection, transaction
from django.test import Client
from google.protobuf import json_format
from opentelemetry._logs import LogRecord
from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceResponse
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.trace import SpanKind, set_span_in_context

from datasets.models import Span, SpanLog, Trace
from datasets.otlp.decoding import request_decode
from datasets.otlp.ingestion import otlp_spans_ingest
from datasets.otlp.log_decoding import logs_request_decode
from datasets.otlp.log_ingestion import otlp_logs_ingest
from tests.base import actors_create
from tests.datasets.test_otlp_mapping import ANSWER, MS, QUESTION, T0, protobuf_body, sdk_spans

PROTOBUF = "application/x-protobuf"
JSON = "application/json"
SYSTEM = "You quote meeting rooms."


def openai_v2_call(tracer, *, events, question=QUESTION, answer=ANSWER, event_name_attribute=False):
    """One chat call as openai-v2 records it; its content is appended to ``events`` as log records."""
    with tracer.start_as_current_span(
        "chat gpt-4o-mini",
        kind=SpanKind.CLIENT,
        start_time=T0,
        end_on_exit=False,
        attributes={
            "gen_ai.operation.name": "chat",
            "gen_ai.system": "openai",
            "gen_ai.request.model": "gpt-4o-mini",
            "gen_ai.response.model": "gpt-4o-mini-2024-07-18",
            "gen_ai.usage.input_tokens": 31,
            "gen_ai.usage.output_tokens": 12,
            "gen_ai.response.finish_reasons": ("stop",),
        },
    ) as span:
        context = set_span_in_context(span)
        bodies = [
            ("gen_ai.system.message", {"content": SYSTEM}),
            ("gen_ai.user.message", {"content": question}),
            (
                "gen_ai.choice",
                {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": answer}},
            ),
        ]
        for offset, (name, body) in enumerate(bodies):
            attributes = {"gen_ai.system": "openai"}
            if event_name_attribute:  # the older Events API put the name in an attribute
                attributes["event.name"] = name
            events.append(
                LogRecord(
                    timestamp=T0 + (offset + 1) * MS,
                    context=context,
                    body=body,
                    attributes=attributes,
                    event_name=None if event_name_attribute else name,
                )
            )
        span.end(end_time=T0 + 600 * MS)


def recorded(**options):
    """``(spans, log records)`` of one openai-v2 chat call."""
    records = []
    spans = sdk_spans(lambda tracer: openai_v2_call(tracer, events=records, **options))
    return spans, logs_readable(records)


def logs_readable(records):
    exporter = InMemoryLogRecordExporter()
    provider = LoggerProvider(resource=Resource.create({"service.name": "reservo"}))
    provider.add_log_record_processor(SimpleLogRecordProcessor(exporter))
    logger = provider.get_logger("opentelemetry.instrumentation.openai_v2", "2.4b0")
    for record in records:
        logger.emit(record)
    provider.shutdown()
    return list(exporter.get_finished_logs())


def logs_protobuf(logs):
    return encode_logs(logs).SerializeToString()


def logs_json(logs):
    payload = json.loads(json_format.MessageToJson(encode_logs(logs)))
    for resource in payload["resourceLogs"]:
        for scope in resource["scopeLogs"]:
            for record in scope["logRecords"]:
                for key in ("traceId", "spanId"):
                    if record.get(key):
                        record[key] = base64.b64decode(record[key]).hex()
    return json.dumps(payload).encode()


def _post(path, body, key, *, content_type=PROTOBUF, encoding=None):
    headers = {"Authorization": f"Bearer {key}"}
    if encoding:
        headers["Content-Encoding"] = encoding
    return Client().post(path, data=body, content_type=content_type, headers=headers)


def _answer(response):
    if response["Content-Type"] == PROTOBUF:
        return json_format.MessageToDict(ExportLogsServiceResponse.FromString(response.content))
    return response.json()


def _run(actors, spans):
    return Trace.objects.get(project=actors.acme, trace_id=format(spans[0].context.trace_id, "032x"))


def _chat(run):
    return Span.objects.get(trace=run, kind="llm")


def test_log_records_sent_after_the_spans_fill_the_call_and_the_run(actors):
    spans, logs = recorded()
    assert _post("/v1/traces", protobuf_body(spans), actors.acme_key).status_code == 200
    run = _run(actors, spans)
    assert (run.input, run.output, run.revision) == (None, None, 1)

    response = _post("/v1/logs", logs_protobuf(logs), actors.acme_key)
    assert response.status_code == 200
    assert response["Content-Type"] == PROTOBUF
    assert response.content == b""  # an ExportLogsServiceResponse without partialSuccess
    run.refresh_from_db()
    assert (run.input, run.output) == (QUESTION, ANSWER)
    assert run.revision == 2  # scores computed without the content are stale
    chat = _chat(run)
    assert [m["role"] for m in chat.input] == ["system", "user"]
    assert chat.input[0]["parts"] == [{"type": "text", "content": SYSTEM}]
    assert chat.output == [
        {"role": "assistant", "parts": [{"type": "text", "content": ANSWER}], "finish_reason": "stop"}
    ]
    assert chat.attributes["otel.log_content"] == ["input", "output"]


def test_log_records_sent_before_the_spans_make_the_same_run(actors):
    spans, logs = recorded()
    _post("/v1/traces", protobuf_body(spans), actors.acme_key)
    _post("/v1/logs", logs_protobuf(logs), actors.acme_key)
    after = _run(actors, spans)
    expected = (after.input, after.output, _chat(after).input, _chat(after).output, _chat(after).attributes)
    Trace.objects.all().delete()
    SpanLog.objects.all().delete()

    assert _post("/v1/logs", logs_protobuf(logs), actors.acme_key).status_code == 200
    assert not Trace.objects.exists() and SpanLog.objects.count() == 3
    _post("/v1/traces", protobuf_body(spans), actors.acme_key)
    before = _run(actors, spans)
    assert (
        before.input,
        before.output,
        _chat(before).input,
        _chat(before).output,
        _chat(before).attributes,
    ) == expected
    assert before.revision == 1


def test_log_records_in_gzipped_json_with_the_event_name_as_an_attribute_are_joined(actors):
    spans, logs = recorded(event_name_attribute=True)
    _post("/v1/traces", protobuf_body(spans), actors.acme_key)
    response = _post("/v1/logs", gzip.compress(logs_json(logs)), actors.acme_key, content_type=JSON, encoding="gzip")
    assert response.status_code == 200
    assert response["Content-Type"] == JSON
    assert response.json() == {}
    run = _run(actors, spans)
    assert (run.input, run.output) == (QUESTION, ANSWER)


def test_a_resent_logs_export_changes_nothing(actors):
    spans, logs = recorded()
    _post("/v1/traces", protobuf_body(spans), actors.acme_key)
    _post("/v1/logs", logs_protobuf(logs), actors.acme_key)
    _post("/v1/logs", logs_protobuf(logs), actors.acme_key)
    run = _run(actors, spans)
    assert run.revision == 2 and SpanLog.objects.count() == 3


def test_the_spans_own_content_wins_over_log_records(actors):
    records = []

    def call(tracer):
        openai_v2_call(tracer, events=records)

    spans = sdk_spans(call)
    # The same call, but with its messages on the span as the current conventions put them.
    spans[0]._attributes = dict(spans[0].attributes) | {
        "gen_ai.input.messages": json.dumps([{"role": "user", "parts": [{"type": "text", "content": "own"}]}])
    }
    _post("/v1/traces", protobuf_body(spans), actors.acme_key)
    _post("/v1/logs", logs_protobuf(logs_readable(records)), actors.acme_key)
    run = _run(actors, spans)
    assert (run.input, run.output) == ("own", ANSWER)
    assert _chat(run).attributes["otel.log_content"] == ["output"]


def test_records_without_a_span_or_of_other_kinds_are_rejected_with_the_reason(actors):
    spans, logs = recorded()
    plain = logs_readable([LogRecord(timestamp=T0, body="user logged in", attributes={"user": "u1"})])
    response = _post("/v1/logs", logs_protobuf(logs + plain), actors.acme_key, content_type=PROTOBUF)
    partial = _answer(response)["partialSuccess"]
    assert partial["rejectedLogRecords"] == "1"
    assert "names no span" in partial["errorMessage"]
    assert SpanLog.objects.count() == 3


def test_a_record_with_a_bad_json_id_is_rejected_alone(actors):
    spans, logs = recorded()
    payload = json.loads(logs_json(logs))
    payload["resourceLogs"][0]["scopeLogs"][0]["logRecords"][0]["spanId"] = "xyz"
    response = _post("/v1/logs", json.dumps(payload).encode(), actors.acme_key, content_type=JSON)
    partial = response.json()["partialSuccess"]
    assert partial["rejectedLogRecords"] == "1"
    assert "spanId" in partial["errorMessage"]
    assert SpanLog.objects.count() == 2


@pytest.mark.parametrize("content_type", [PROTOBUF, JSON])
def test_an_undecodable_logs_body_is_a_400_and_keeps_nothing(actors, content_type):
    response = _post("/v1/logs", b"\xff\x00not otlp", actors.acme_key, content_type=content_type)
    assert response.status_code == 400
    assert not SpanLog.objects.exists()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (b'{"resourceLogs": [{"scopeLogs": [{"logRecords": ["AAA"]}]}]}', "resourceLogs[0].scopeLogs[0].logRecords[0]"),
        (b'{"resourceLogs": [{"scopeLogs": {"logRecords": []}}]}', "resourceLogs[0].scopeLogs"),
        (b'{"resourceLogs": [], "resourceLogs": []}', "resourceLogs"),
    ],
)
def test_a_logs_json_body_of_the_wrong_shape_is_a_400_naming_where(actors, body, field):
    response = _post("/v1/logs", body, actors.acme_key, content_type=JSON)
    assert response.status_code == 400
    assert field in response.json()["message"]
    assert not SpanLog.objects.exists()


def test_logs_need_a_key_and_stay_in_their_project(actors):
    spans, logs = recorded()
    assert _post("/v1/logs", logs_protobuf(logs), "esk_nope").status_code == 401
    _post("/v1/traces", protobuf_body(spans), actors.acme_key)
    _post("/v1/logs", logs_protobuf(logs), actors.umbrella_key)  # another project's key
    run = _run(actors, spans)
    assert (run.input, run.output) == (None, None)
    assert SpanLog.objects.filter(project=actors.umbrella).count() == 3


@pytest.mark.skipif(connection.vendor != "postgresql", reason="SQLite serialises writing transactions by itself")
def test_records_exported_while_their_spans_are_being_written_still_join_them(transactional_db):
    """The logs export comes while the spans export's transaction is still open (and invisible to it)."""
    actors = actors_create()
    spans, logs = recorded()
    span_records = request_decode(protobuf_body(spans), content_type=PROTOBUF, content_encoding=None, limit=10**7)
    log_records = logs_request_decode(logs_protobuf(logs), content_type=PROTOBUF, content_encoding=None, limit=10**7)
    spans_written, release = threading.Event(), threading.Event()

    def export_spans():
        try:
            with transaction.atomic():
                otlp_spans_ingest(project=actors.acme, spans=span_records)
                spans_written.set()
                release.wait(10)  # the spans are written, not yet committed
        finally:
            connection.close()

    def export_logs():
        try:
            otlp_logs_ingest(project=actors.acme, logs=log_records)
        finally:
            connection.close()

    spans_thread = threading.Thread(target=export_spans)
    spans_thread.start()
    assert spans_written.wait(10)
    logs_thread = threading.Thread(target=export_logs)
    logs_thread.start()
    logs_thread.join(1)
    assert logs_thread.is_alive()  # it waits for the spans export rather than missing its span
    release.set()
    spans_thread.join(10)
    logs_thread.join(10)
    run = _run(actors, spans)
    assert (run.input, run.output) == (QUESTION, ANSWER)


def test_one_inference_details_record_per_call_fills_the_call(actors):
    """The current conventions' single ``gen_ai.client.inference.operation.details`` record, structured."""
    records = []
    spans = sdk_spans(lambda tracer: openai_v2_call(tracer, events=records))
    details = LogRecord(
        timestamp=T0 + 5 * MS,
        context=records[0].context,
        event_name="gen_ai.client.inference.operation.details",
        attributes={
            "gen_ai.operation.name": "chat",
            "gen_ai.system_instructions": json.dumps([{"type": "text", "content": SYSTEM}]),
        },
        body={
            "gen_ai.input.messages": [{"role": "user", "parts": [{"type": "text", "content": QUESTION}]}],
            "gen_ai.output.messages": [
                {"role": "assistant", "parts": [{"type": "text", "content": ANSWER}], "finish_reason": "stop"}
            ],
        },
    )
    _post("/v1/traces", protobuf_body(spans), actors.acme_key)
    _post("/v1/logs", logs_protobuf(logs_readable([details])), actors.acme_key)
    run = _run(actors, spans)
    assert (run.input, run.output) == (QUESTION, ANSWER)
    assert [m["role"] for m in _chat(run).input] == ["system", "user"]
