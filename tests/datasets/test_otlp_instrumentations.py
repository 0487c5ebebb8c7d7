"""The real instrumentation packages, on the real ``openai`` client, against a local OpenAI-compatible server.

An agent asks a question, the model calls ``quote_room``, the agent runs the tool and
the model answers. The client is instrumented by ``opentelemetry-instrumentation-openai-v2``
(content in log records) or by ``openinference-instrumentation-openai`` (content in
span attributes); the spans and log records the SDK collects are posted as the OTLP
exporters post them, and the stored run is read back whole.
"""

import contextlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import metadata

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
from scoring.pipeline.loading import runs_load
from tests.datasets.test_otlp_mapping import ANSWER, QUESTION, protobuf_body
from tests.live import ROOT

SYSTEM = "You quote meeting rooms."
RUN_ATTRIBUTES = {"evalsite.experiment": "v2", "evalsite.trial": 1}
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


def run_agent(model_url, tracer, *, parent="invoke_agent", own_tool_span=True):
    """The agent: two model calls made by the openai client, the tool run in between.

    ``parent``: ``"invoke_agent"``, the agent's own root span (GenAI conventions);
    ``"agent"``, a plain span carrying evalsite's run attributes (the setup docs/otel.md
    gives); ``None``, no span around the calls (bare instrumentation).
    ``own_tool_span``: the agent records the tool call itself (``execute_tool``).
    """
    client = openai.OpenAI(base_url=model_url, api_key="test", max_retries=0)
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": QUESTION}]
    with _parent_span(tracer, parent):
        reply = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOLS)
        call = reply.choices[0].message.tool_calls[0]
        result = quote_room(json.loads(call.function.arguments))
        if own_tool_span:
            with tracer.start_as_current_span(
                "execute_tool quote_room",
                attributes={
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": "quote_room",
                    "gen_ai.tool.call.arguments": call.function.arguments,
                    "gen_ai.tool.call.result": result,
                },
            ):
                pass
        messages.append(reply.choices[0].message.model_dump(exclude_none=True))
        messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
        client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOLS)


def quote_room(arguments):
    assert arguments == {"room": "Focus"}
    return '{"total_cents": 7500}'


def _parent_span(tracer, parent):
    if parent == "invoke_agent":
        return tracer.start_as_current_span(
            "invoke_agent reservo", attributes={"gen_ai.operation.name": "invoke_agent"}
        )
    if parent == "agent":
        return tracer.start_as_current_span("reservo", attributes=RUN_ATTRIBUTES)
    return contextlib.nullcontext()


def instrumented_run(model_url, instrumentor, **agent):
    """``(spans, log records)`` of one agent run under ``instrumentor``."""
    spans, logs = InMemorySpanExporter(), InMemoryLogRecordExporter()
    resource = Resource.create({"service.name": "reservo"})
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    logger_provider = LoggerProvider(resource=resource)
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(logs))
    instrumentor.instrument(tracer_provider=tracer_provider, logger_provider=logger_provider)
    try:
        run_agent(model_url, tracer_provider.get_tracer("reservo"), **agent)
    finally:
        instrumentor.uninstrument()
    return list(spans.get_finished_spans()), list(logs.get_finished_logs())


def _post(path, body, key):
    headers = {"Authorization": f"Bearer {key}"}
    response = Client().post(path, data=body, content_type="application/x-protobuf", headers=headers)
    assert response.status_code == 200
    assert response.content == b""  # nothing rejected
    return response


def assert_whole_run(actors, spans, *, model, name="reservo"):
    """The run of ``spans``: question, answer, tokens, model, cost, and the tool call with its arguments and result."""
    trace_ids = {span.context.trace_id for span in spans}
    assert len(trace_ids) == 1  # one agent invocation, one trace
    run = Trace.objects.get(project=actors.acme, trace_id=format(trace_ids.pop(), "032x"))
    assert Trace.objects.filter(project=actors.acme).count() == 1
    assert (run.name, run.status) == (name, "ok")
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
    assert first.ended_at <= tool.started_at <= tool.ended_at <= last.started_at
    assert [m["role"] for m in first.input] == ["system", "user"]
    assert first.output[0]["parts"][0]["name"] == "quote_room"
    assert first.output[0]["parts"][0]["arguments"] == {"room": "Focus"}
    assert [m["role"] for m in last.input] == ["system", "user", "assistant", "tool"]
    assert last.output[0]["parts"] == [{"type": "text", "content": ANSWER}]
    return run


def _tool_checks(run):
    """The run's tool calls as the tool checks read them."""
    (loaded,) = runs_load([run.pk])
    return [(t.name, t.input, t.output) for t in loaded.view.tool_calls()]


def _pinned(name):
    for line in (ROOT / "requirements-dev.txt").read_text().splitlines():
        if line.startswith(f"{name}=="):
            return line.split("==", 1)[1].split("#")[0].strip()
    raise AssertionError(f"{name} is not pinned in requirements-dev.txt")


@pytest.mark.parametrize("name", ["opentelemetry-instrumentation-openai-v2", "opentelemetry-util-genai", "openai"])
def test_the_pinned_releases_are_the_ones_tested(name):
    assert metadata.version(name) == _pinned(name)


def _openai_v2(monkeypatch, capture):
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

    monkeypatch.setenv("OTEL_SEMCONV_STABILITY_OPT_IN", "gen_ai_latest_experimental")
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", capture)
    return OpenAIInstrumentor()


@pytest.mark.parametrize(
    ("capture", "logs_first"),
    [("span_only", False), ("span_and_event", False), ("span_and_event", True), ("event_only", False), ("event_only", True)],
    ids=["span_only", "span_and_event, logs after spans", "span_and_event, logs first", "event_only, logs after spans",
         "event_only, logs first"],
)  # fmt: skip
def test_openai_v2_under_a_parent_span_makes_one_whole_run(actors, model_url, monkeypatch, capture, logs_first):
    """The documented setup: the agent's invocation is one span with evalsite's run attributes.

    The tool runs in the agent's code, in no span: the run's tool call is the one the
    first model call asked for, with the result the second one was sent.
    """
    spans, logs = instrumented_run(model_url, _openai_v2(monkeypatch, capture), parent="agent", own_tool_span=False)
    content = {k for s in spans for k in s.attributes if k.endswith("put.messages")}
    assert content == (set() if capture == "event_only" else {"gen_ai.input.messages", "gen_ai.output.messages"})
    events = [log.log_record.event_name for log in logs]
    assert events == ([] if capture == "span_only" else ["gen_ai.client.inference.operation.details"] * 2)
    bodies = [("/v1/traces", protobuf_body(spans))]
    if logs:
        bodies.append(("/v1/logs", encode_logs(logs).SerializeToString()))
    for path, body in reversed(bodies) if logs_first else bodies:
        _post(path, body, actors.acme_key)
    run = assert_whole_run(actors, spans, model="gpt-4o-mini")
    assert (run.experiment.name, run.trial) == ("v2", 1)
    assert _tool_checks(run) == [("quote_room", {"room": "Focus"}, {"total_cents": 7500})]
    tool = Span.objects.get(trace=run, kind="tool")
    first = Span.objects.filter(trace=run, kind="llm").order_by("started_at").first()
    assert tool.attributes == {"evalsite.derived_from": first.span_id, "gen_ai.tool.call.id": "call_1"}


def test_openai_v2_with_the_agents_own_tool_span_has_the_tool_call_once(actors, model_url, monkeypatch):
    spans, _ = instrumented_run(model_url, _openai_v2(monkeypatch, "span_only"))
    _post("/v1/traces", protobuf_body(spans), actors.acme_key)
    run = assert_whole_run(actors, spans, model="gpt-4o-mini")
    (tool,) = Span.objects.filter(trace=run, kind="tool")
    assert "evalsite.derived_from" not in tool.attributes  # the agent's own span, not one derived


def test_openai_v2_bare_makes_one_run_per_model_call(actors, model_url, monkeypatch):
    """No span around the calls: each model call is a trace of its own, so a run of its own.

    The first run holds the question and the tool call with its arguments, but not its
    result (it went to the next call, the second run); the second holds the question
    and the answer, and no tool call.
    """
    spans, _ = instrumented_run(model_url, _openai_v2(monkeypatch, "span_only"), parent=None, own_tool_span=False)
    assert len({s.context.trace_id for s in spans}) == 2
    _post("/v1/traces", protobuf_body(spans), actors.acme_key)
    asked, answered = Trace.objects.filter(project=actors.acme).order_by("started_at")
    assert (asked.name, asked.input) == ("chat gpt-4o-mini", QUESTION)
    assert asked.output[0]["parts"][0] == {
        "type": "tool_call",
        "id": "call_1",
        "name": "quote_room",
        "arguments": {"room": "Focus"},
    }
    assert _tool_checks(asked) == [("quote_room", {"room": "Focus"}, None)]
    assert (answered.input, answered.output) == (QUESTION, ANSWER)
    assert _tool_checks(answered) == []
    for run in (asked, answered):
        assert run.usage == {"input_tokens": 31, "output_tokens": 12, "total_tokens": 43}
        assert run.cost_cents > 0


def test_openai_v2_capture_true_records_no_content_at_these_releases(actors, model_url, monkeypatch):
    """``true``, the older releases' setting, is not a mode of util-genai 1.x: it captures nothing."""
    spans, logs = instrumented_run(model_url, _openai_v2(monkeypatch, "true"), parent="agent", own_tool_span=False)
    assert logs == []
    _post("/v1/traces", protobuf_body(spans), actors.acme_key)
    run = Trace.objects.get(project=actors.acme)
    assert (run.input, run.output) == (None, None)
    assert run.usage == {"input_tokens": 62, "output_tokens": 24, "total_tokens": 86}
    assert _tool_checks(run) == []


@pytest.mark.parametrize("own_tool_span", [True, False], ids=["own tool span", "tool in no span"])
def test_openinference_openai_makes_a_whole_run(actors, model_url, own_tool_span):
    from openinference.instrumentation.openai import OpenAIInstrumentor

    spans, _ = instrumented_run(model_url, OpenAIInstrumentor(), own_tool_span=own_tool_span)
    _post("/v1/traces", protobuf_body(spans), actors.acme_key)
    run = assert_whole_run(actors, spans, model="gpt-4o-mini-2024-07-18")
    assert _tool_checks(run) == [("quote_room", {"room": "Focus"}, {"total_cents": 7500})]
