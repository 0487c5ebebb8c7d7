"""The real instrumentation packages, on the real ``openai`` client, against a local OpenAI-compatible server.

An agent asks a question, the model calls ``quote_room``, the agent runs the tool and
the model answers. The client is instrumented by ``opentelemetry-instrumentation-openai-v2``
(content in log records) or by ``openinference-instrumentation-openai`` (content in
span attributes); the spans and log records the SDK collects are posted as the OTLP
exporters post them, and the stored run is read back whole.
"""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import openai
import pytest
from django.test import Client
from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from datasets.models import Span, Trace
from tests.datasets.test_otlp_mapping import ANSWER, QUESTION, protobuf_body

SYSTEM = "You quote meeting rooms."
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "quote_room",
            "parameters": {"type": "object", "properties": {"room": {"type": "string"}}},
        },
    }
]


class _ChatServer(BaseHTTPRequestHandler):
    """``POST /v1/chat/completions``: a tool call first, the answer once the tool's result is in."""

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if any(m.get("role") == "tool" for m in body["messages"]):
            message, finish = {"role": "assistant", "content": ANSWER}, "stop"
        else:
            call = {
                "id": "call_1",
                "type": "function",
                "function": {"name": "quote_room", "arguments": '{"room": "Focus"}'},
            }
            message, finish = {"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls"
        answer = {
            "id": "chatcmpl-1", "object": "chat.completion", "created": 1790000000, "model": "gpt-4o-mini-2024-07-18",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 31, "completion_tokens": 12, "total_tokens": 43},
        }  # fmt: skip
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture(scope="module")
def model_url():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _ChatServer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/v1"
    server.shutdown()
    server.server_close()


def run_agent(model_url, tracer):
    """The agent: its own root and tool spans (GenAI conventions), the model calls made by the openai client."""
    client = openai.OpenAI(base_url=model_url, api_key="test", max_retries=0)
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": QUESTION}]
    with tracer.start_as_current_span("invoke_agent reservo", attributes={"gen_ai.operation.name": "invoke_agent"}):
        reply = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOLS)
        call = reply.choices[0].message.tool_calls[0]
        with tracer.start_as_current_span(
            "execute_tool quote_room",
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "quote_room",
                "gen_ai.tool.call.arguments": call.function.arguments,
                "gen_ai.tool.call.result": '{"total_cents": 7500}',
            },
        ):
            pass
        messages.append(reply.choices[0].message.model_dump(exclude_none=True))
        messages.append({"role": "tool", "tool_call_id": call.id, "content": '{"total_cents": 7500}'})
        client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOLS)


def instrumented_run(model_url, instrumentor):
    """``(spans, log records)`` of one agent run under ``instrumentor``."""
    spans, logs = InMemorySpanExporter(), InMemoryLogRecordExporter()
    resource = Resource.create({"service.name": "reservo"})
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    logger_provider = LoggerProvider(resource=resource)
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(logs))
    instrumentor.instrument(tracer_provider=tracer_provider, logger_provider=logger_provider)
    try:
        run_agent(model_url, tracer_provider.get_tracer("reservo"))
    finally:
        instrumentor.uninstrument()
    return list(spans.get_finished_spans()), list(logs.get_finished_logs())


def _post(path, body, key):
    headers = {"Authorization": f"Bearer {key}"}
    response = Client().post(path, data=body, content_type="application/x-protobuf", headers=headers)
    assert response.status_code == 200
    assert response.content == b""  # nothing rejected
    return response


def assert_whole_run(actors, spans, *, model):
    run = Trace.objects.get(project=actors.acme, trace_id=format(spans[0].context.trace_id, "032x"))
    assert (run.name, run.status) == ("reservo", "ok")
    assert (run.input, run.output) == (QUESTION, ANSWER)
    assert run.usage == {"input_tokens": 62, "output_tokens": 24, "total_tokens": 86}
    assert run.models_used == [model]
    assert run.cost_cents > 0 and run.cost_detail["sources"] == ["genai-prices"]
    stored = {s.span_id: s for s in Span.objects.filter(trace=run)}
    root = next(s for s in stored.values() if s.parent_span_id is None)
    assert sorted((s.kind, s.parent_span_id == root.span_id) for s in stored.values() if s is not root) == [
        ("llm", True), ("llm", True), ("tool", True),
    ]  # fmt: skip
    tool = next(s for s in stored.values() if s.kind == "tool")
    assert (tool.name, tool.input, tool.output) == ("quote_room", {"room": "Focus"}, {"total_cents": 7500})
    first, last = sorted((s for s in stored.values() if s.kind == "llm"), key=lambda s: s.started_at)
    assert [m["role"] for m in first.input] == ["system", "user"]
    assert first.output[0]["parts"][0]["name"] == "quote_room"
    assert first.output[0]["parts"][0]["arguments"] == {"room": "Focus"}
    assert [m["role"] for m in last.input] == ["system", "user", "assistant", "tool"]
    assert last.output[0]["parts"] == [{"type": "text", "content": ANSWER}]
    return run


@pytest.mark.parametrize("logs_first", [False, True], ids=["logs after spans", "logs before spans"])
def test_openai_v2_with_content_capture_makes_a_whole_run(actors, model_url, monkeypatch, logs_first):
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    spans, logs = instrumented_run(model_url, OpenAIInstrumentor())
    assert {log.log_record.event_name for log in logs} >= {"gen_ai.user.message", "gen_ai.choice"}
    bodies = [("/v1/traces", protobuf_body(spans)), ("/v1/logs", encode_logs(logs).SerializeToString())]
    for path, body in reversed(bodies) if logs_first else bodies:
        _post(path, body, actors.acme_key)
    assert_whole_run(actors, spans, model="gpt-4o-mini")


def test_openinference_openai_makes_a_whole_run(actors, model_url):
    from openinference.instrumentation.openai import OpenAIInstrumentor

    spans, _ = instrumented_run(model_url, OpenAIInstrumentor())
    _post("/v1/traces", protobuf_body(spans), actors.acme_key)
    assert_whole_run(actors, spans, model="gpt-4o-mini-2024-07-18")
