"""The OpenTelemetry SDK's own OTLP/HTTP exporter against a live server (gunicorn, real database).

These are the paths users take: a TracerProvider with a span processor and
``OTLPSpanExporter(endpoint=.../v1/traces, headers={"Authorization": "Bearer ..."})``,
protobuf as the exporter sends it (plain and gzip), and OTLP JSON built from the same
SDK spans and posted over HTTP.
"""

import gzip
import json
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests
from google.protobuf import json_format
from google.rpc import code_pb2, status_pb2
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from datasets.models import Trace
from evalsite.models import QuotaWindow
from tests.base import actors_create
from tests.datasets.test_otlp_endpoint import json_body, run_view
from tests.datasets.test_otlp_logs import openai_v2_call
from tests.datasets.test_otlp_mapping import ANSWER, MS, QUESTION, T0, genai_agent, openinference_agent, sdk_spans
from tests.live import web_server


@pytest.fixture(scope="module")
def live_url(django_db_setup):
    with web_server(workers=2, threads=4) as url:
        yield url


@pytest.fixture
def live(live_url, transactional_db):
    """The live server's URL and the named actors (the database is emptied after each test)."""
    return live_url, actors_create()


def exporter_for(url, key, *, compression=Compression.NoCompression):
    return OTLPSpanExporter(
        endpoint=url + "/v1/traces", headers={"Authorization": f"Bearer {key}"}, compression=compression, timeout=30
    )


def instrumented(agent, exporter, *, processor=SimpleSpanProcessor, resource=None):
    """Run ``agent`` under a TracerProvider that exports through ``exporter``; returns the spans it made."""
    seen = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create(resource or {"service.name": "reservo"}))
    provider.add_span_processor(processor(exporter))
    provider.add_span_processor(SimpleSpanProcessor(seen))
    agent(provider.get_tracer("reservo.agent", "2.1.0"))
    assert provider.force_flush(30_000)
    provider.shutdown()
    return list(seen.get_finished_spans())


def _trace_id(spans):
    return format(spans[0].context.trace_id, "032x")


def test_the_sdk_exporter_delivers_a_genai_agent_run_as_protobuf(live):
    url, actors = live
    spans = instrumented(genai_agent, exporter_for(url, actors.acme_key), processor=BatchSpanProcessor)
    run = Trace.objects.get(project=actors.acme, trace_id=_trace_id(spans))
    assert (run.source, run.name, run.input, run.output, run.status) == ("otlp", "reservo", QUESTION, ANSWER, "ok")
    assert run.latency_ms == 1200
    tools = run.spans.filter(kind="tool")
    assert [(t.name, t.input, t.output) for t in tools] == [
        ("quote_room", {"room": "Focus", "tier": "pro", "hours": 3}, {"total_cents": 7500})
    ]
    assert sorted(run.spans.filter(kind="llm").values_list("usage__input_tokens", flat=True)) == [120, 160]
    # It reads like any other run through the API.
    detail = actors.api().get(f"/v1/api/traces/{run.trace_id}").json()
    assert [s["name"] for s in detail["spans"]] == ["reservo", "chat gpt-4o-mini", "quote_room", "chat gpt-4o-mini"]


def test_the_sdk_exporter_delivers_an_openinference_run_gzipped(live):
    url, actors = live
    exporter = exporter_for(url, actors.acme_key, compression=Compression.Gzip)
    spans = instrumented(
        openinference_agent, exporter, resource={"service.name": "reservo", "evalsite.experiment": "v2"}
    )
    run = Trace.objects.get(project=actors.acme, trace_id=_trace_id(spans))
    assert (run.name, run.input, run.output) == ("reservo", QUESTION, ANSWER)
    assert str(run.cost_cents) == "0.630000"
    assert run.experiment.name == "v2"
    assert sorted(run.spans.values_list("kind", flat=True)) == ["agent", "llm", "llm", "retrieval", "tool"]


@pytest.mark.parametrize("hex_ids", [True, False], ids=["hex ids", "base64 ids"])
def test_otlp_json_of_the_sdk_spans_makes_the_same_run_as_protobuf(live, hex_ids):
    url, actors = live
    spans = sdk_spans(genai_agent)
    response = requests.post(
        url + "/v1/traces",
        data=json_body(spans, hex_ids=hex_ids),
        headers={"Authorization": f"Bearer {actors.acme_key}", "Content-Type": "application/json"},
        timeout=30,
    )
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "application/json"
    assert response.json() == {}
    from_json = run_view(Trace.objects.get(trace_id=_trace_id(spans)))
    Trace.objects.all().delete()
    assert exporter_for(url, actors.acme_key).export(spans) == SpanExportResult.SUCCESS
    assert run_view(Trace.objects.get(trace_id=_trace_id(spans))) == from_json


def test_spans_split_over_several_exports_out_of_order_make_one_complete_run(live):
    url, actors = live
    spans = sdk_spans(genai_agent)
    exporter = exporter_for(url, actors.acme_key, compression=Compression.Gzip)
    assert exporter.export(spans) == SpanExportResult.SUCCESS
    whole = run_view(Trace.objects.get(trace_id=_trace_id(spans)))
    Trace.objects.all().delete()
    root = next(s for s in spans if s.parent is None)
    children = [s for s in spans if s.parent is not None]
    for part in ([children[2]], [children[0], children[2]], [root], [children[1]], spans):  # late, repeated, re-sent
        assert exporter.export(part) == SpanExportResult.SUCCESS
    assert Trace.objects.count() == 1
    assert run_view(Trace.objects.get(trace_id=_trace_id(spans))) == whole


def test_another_projects_key_writes_only_to_that_project(live):
    url, actors = live
    spans = sdk_spans(genai_agent)
    assert exporter_for(url, actors.umbrella_key).export(spans) == SpanExportResult.SUCCESS
    assert Trace.objects.get(trace_id=_trace_id(spans)).project == actors.umbrella
    assert actors.api().get(f"/v1/api/traces/{_trace_id(spans)}").status_code == 404
    assert actors.outsider_api().get(f"/v1/api/traces/{_trace_id(spans)}").status_code == 200


def test_an_unknown_key_fails_the_export_and_writes_nothing(live):
    url, actors = live
    assert exporter_for(url, "esk_unknown_0000000000").export(sdk_spans(genai_agent)) == SpanExportResult.FAILURE
    assert Trace.objects.count() == 0


@pytest.mark.parametrize(
    ("body", "encoding"),
    [(b"\x0a\xff\xff\xff", None), (gzip.compress(b"\x0a\xff\xff\xff"), "gzip"), (b"\x1f\x8b junk", "gzip")],
)
def test_a_malformed_body_is_a_400_with_a_protobuf_status(live, body, encoding):
    url, actors = live
    headers = {"Authorization": f"Bearer {actors.acme_key}", "Content-Type": "application/x-protobuf"}
    if encoding:
        headers["Content-Encoding"] = encoding
    response = requests.post(url + "/v1/traces", data=body, headers=headers, timeout=30)
    assert response.status_code == 400
    assert response.headers["Content-Type"] == "application/x-protobuf"
    assert status_pb2.Status.FromString(response.content).code == code_pb2.INVALID_ARGUMENT


def test_a_partial_rejection_is_a_200_that_names_the_rejected_spans(live):
    url, actors = live
    spans = sdk_spans(genai_agent)
    message = encode_spans(spans)
    bad = message.resource_spans[0].scope_spans[0].spans[1]
    bad.end_time_unix_nano = bad.start_time_unix_nano - 1
    response = requests.post(
        url + "/v1/traces",
        data=gzip.compress(message.SerializeToString()),
        headers={
            "Authorization": f"Bearer {actors.acme_key}",
            "Content-Type": "application/x-protobuf",
            "Content-Encoding": "gzip",
        },
        timeout=30,
    )
    assert response.status_code == 200
    answer = ExportTraceServiceResponse.FromString(response.content)
    assert answer.partial_success.rejected_spans == 1
    assert f"span {bad.span_id.hex()} ends before it starts" in answer.partial_success.error_message
    stored = Trace.objects.get(trace_id=_trace_id(spans)).spans
    # The three others, and the rejected tool span's call as the model calls tell it.
    assert sorted(stored.values_list("span_id", flat=True)) == sorted(
        [s.span_id.hex() for s in message.resource_spans[0].scope_spans[0].spans if s is not bad]
        + [f"{spans[0].context.span_id:016x}:tool_call:0"]
    )


def test_concurrent_exports_of_one_trace_from_several_processes_make_one_run(live):
    url, actors = live
    actors.acme.quota_per_minute = 1000
    actors.acme.save()

    def wide_agent(tracer):
        with tracer.start_as_current_span(
            "invoke_agent reservo",
            start_time=T0,
            end_on_exit=False,
            attributes={"gen_ai.operation.name": "invoke_agent"},
        ) as root:
            for i in range(48):
                with tracer.start_as_current_span(
                    f"execute_tool step_{i}",
                    start_time=T0 + (i + 1) * MS,
                    end_on_exit=False,
                    attributes={"gen_ai.operation.name": "execute_tool", "llm.cost.total": 0.01},
                ) as step:
                    step.end(end_time=T0 + (i + 2) * MS)
            root.end(end_time=T0 + 100 * MS)

    spans = sdk_spans(wide_agent)
    parts = [spans[i::8] for i in range(8)] * 2  # every span sent twice, by different requests
    barrier = threading.Barrier(len(parts))

    def send(part):
        exporter = exporter_for(url, actors.acme_key)
        barrier.wait(timeout=30)
        # A 503 (too many exports at once) is retried by the exporter after Retry-After.
        return exporter.export(part)

    with ThreadPoolExecutor(max_workers=len(parts)) as pool:
        results = list(pool.map(send, parts))
    assert results == [SpanExportResult.SUCCESS] * len(parts)
    run = Trace.objects.get(project=actors.acme)
    assert run.spans.count() == 49
    assert (run.name, run.latency_ms, str(run.cost_cents)) == ("reservo", 100, "48.000000")
    assert sum(QuotaWindow.objects.filter(project=actors.acme).values_list("used", flat=True)) == 1


def test_the_export_response_json_names_partial_success_fields_as_otlp_does(live):
    url, actors = live
    spans = sdk_spans(genai_agent)
    payload = json.loads(json_body(spans))
    payload["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["spanId"] = "zz"
    response = requests.post(
        url + "/v1/traces",
        json=payload,
        headers={"Authorization": f"Bearer {actors.acme_key}"},
        timeout=30,
    )
    partial = response.json()["partialSuccess"]
    assert partial["rejectedSpans"] == "1"
    assert "spanId 'zz' is neither 16 hex digits nor the base64 of 8 bytes" in partial["errorMessage"]
    parsed = json_format.Parse(response.text, ExportTraceServiceResponse())
    assert parsed.partial_success.rejected_spans == 1


def test_a_chunked_body_without_content_length_is_read_whole(live):
    url, actors = live
    spans = sdk_spans(genai_agent)
    body = gzip.compress(encode_spans(spans).SerializeToString())
    chunks = (body[i : i + 100] for i in range(0, len(body), 100))  # a generator: requests sends it chunked
    response = requests.post(
        url + "/v1/traces",
        data=chunks,
        headers={
            "Authorization": f"Bearer {actors.acme_key}",
            "Content-Type": "application/x-protobuf",
            "Content-Encoding": "gzip",
        },
        timeout=30,
    )
    assert response.status_code == 200
    assert response.content == b""
    assert Trace.objects.get(trace_id=_trace_id(spans)).spans.count() == 4


def test_a_chunked_body_over_the_limit_is_a_413(live):
    url, actors = live
    chunks = (b"\x0a" * 1_000_000 for _ in range(17))  # 17 MB, over the 16 MiB default
    response = requests.post(
        url + "/v1/traces",
        data=chunks,
        headers={"Authorization": f"Bearer {actors.acme_key}", "Content-Type": "application/x-protobuf"},
        timeout=60,
    )
    assert response.status_code == 413
    assert status_pb2.Status.FromString(response.content).code == code_pb2.RESOURCE_EXHAUSTED


def _log_exporter_send(url, key, records):
    """Emit ``records`` through a LoggerProvider whose OTLPLogExporter posts to ``url``/v1/logs (gzip)."""
    provider = LoggerProvider(resource=Resource.create({"service.name": "reservo"}))
    provider.add_log_record_processor(
        BatchLogRecordProcessor(
            OTLPLogExporter(
                endpoint=url + "/v1/logs",
                headers={"Authorization": f"Bearer {key}"},
                compression=Compression.Gzip,
                timeout=30,
            )
        )
    )
    logger = provider.get_logger("opentelemetry.instrumentation.openai_v2", "2.4b0")
    for record in records:
        logger.emit(record)
    assert provider.force_flush(30_000)
    provider.shutdown()


@pytest.mark.parametrize("logs_first", [True, False], ids=["logs before spans", "logs after spans"])
def test_the_sdk_log_exporter_delivers_message_content_to_its_span(live, logs_first):
    url, actors = live
    records = []
    spans = sdk_spans(lambda tracer: openai_v2_call(tracer, events=records))
    if logs_first:
        _log_exporter_send(url, actors.acme_key, records)
    assert exporter_for(url, actors.acme_key).export(spans) == SpanExportResult.SUCCESS
    if not logs_first:
        _log_exporter_send(url, actors.acme_key, records)
    run = Trace.objects.get(project=actors.acme, trace_id=_trace_id(spans))
    assert (run.input, run.output) == (QUESTION, ANSWER)
    assert run.models_used == ["gpt-4o-mini"] and run.usage["input_tokens"] == 31
    assert run.cost_detail["sources"] == ["genai-prices"] and run.cost_cents > 0
