"""Tool calls the model calls asked for, as tool spans of the run, when no span of the agent records them.

Spans are made by the OpenTelemetry SDK in the shape ``opentelemetry-instrumentation-openai-v2``
sends with ``span_only`` content (``gen_ai.input.messages`` / ``gen_ai.output.messages``),
posted to ``/v1/traces`` as an exporter posts them, in one export or several, in any order.
"""

import json

import pytest
from django.test import Client
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.id_generator import IdGenerator

from datasets.models import Span, Trace
from scoring.pipeline.loading import runs_load
from tests.datasets.test_otlp_mapping import ANSWER, MS, QUESTION, T0, protobuf_body

TRACE_ID = 0x5B8E0C1F2A3D4E5F60718293A4B5C6D7


class _Ids(IdGenerator):
    """The same ids on every build: a span built twice is the same span sent again."""

    def __init__(self):
        self.count = 0

    def generate_span_id(self):
        self.count += 1
        return self.count

    def generate_trace_id(self):
        return TRACE_ID


def sdk_spans(build):
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "reservo"}), id_generator=_Ids())
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    build(provider.get_tracer("reservo"))
    provider.shutdown()
    return list(exporter.get_finished_spans())


USER = {"role": "user", "parts": [{"type": "text", "content": QUESTION}]}


def _call(call_id, name="quote_room", **arguments):
    part = {"type": "tool_call", "name": name, "arguments": arguments or {"room": "Focus"}}
    if call_id is not None:
        part["id"] = call_id
    return part


def _response(call_id, response):
    return {"role": "tool", "parts": [{"type": "tool_call_response", "id": call_id, "response": response}]}


def _chat(tracer, start, end, inputs, outputs):
    with tracer.start_as_current_span(
        "chat gpt-4o-mini",
        start_time=T0 + start * MS,
        end_on_exit=False,
        attributes={
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": "openai",
            "gen_ai.request.model": "gpt-4o-mini",
            "gen_ai.usage.input_tokens": 31,
            "gen_ai.usage.output_tokens": 12,
            "gen_ai.input.messages": json.dumps(inputs),
            "gen_ai.output.messages": json.dumps(outputs),
        },
    ) as span:
        span.end(end_time=T0 + end * MS)


QUOTE = _call("call_1")
RESULT = ("call_1", '{"total_cents": 7500}')


def agent(calls=(QUOTE,), results=(RESULT,), tool_span=None):
    """``build(tracer)``: a run "reservo" whose first model call asks for ``calls`` and whose second gets ``results``."""

    def build(tracer):
        with tracer.start_as_current_span("reservo", start_time=T0, end_on_exit=False) as root:
            asked = {"role": "assistant", "parts": list(calls), "finish_reason": "tool_calls"}
            _chat(tracer, 10, 400, [USER], [asked])
            if tool_span:
                with tracer.start_as_current_span(
                    "execute_tool", start_time=T0 + 410 * MS, end_on_exit=False, attributes=tool_span
                ) as tool:
                    tool.end(end_time=T0 + 450 * MS)
            answer = {"role": "assistant", "parts": [{"type": "text", "content": ANSWER}], "finish_reason": "stop"}
            history = [USER, {k: v for k, v in asked.items() if k != "finish_reason"}]
            _chat(tracer, 500, 900, history + [_response(i, r) for i, r in results], [answer])
            root.end(end_time=T0 + 1000 * MS)

    return build


def _post(spans):
    response = Client().post(
        "/v1/traces", data=protobuf_body(spans), content_type="application/x-protobuf", headers=_post.headers
    )
    assert response.status_code == 200 and response.content == b""


@pytest.fixture(autouse=True)
def _key(actors):
    _post.headers = {"Authorization": f"Bearer {actors.acme_key}"}


def _run():
    return Trace.objects.get()


def _tool_calls(run):
    (loaded,) = runs_load([run.pk])
    return [(t.name, t.input, t.output) for t in loaded.view.tool_calls()]


def _chats(spans):
    return sorted((s for s in spans if s.name.startswith("chat")), key=lambda s: s.start_time)


@pytest.mark.parametrize("order", ["one export", "answering call first", "root first"])
def test_the_tool_call_is_the_same_whatever_order_the_spans_come_in(order):
    spans = sdk_spans(agent())
    asking, answering = _chats(spans)
    root = next(s for s in spans if s.parent is None)
    exports = {
        "one export": [spans],
        "answering call first": [[answering], [root], [asking]],
        "root first": [[root], [asking], [answering]],
    }[order]
    for export in exports:
        _post(export)
    run = _run()
    assert _tool_calls(run) == [("quote_room", {"room": "Focus"}, {"total_cents": 7500})]
    tool = Span.objects.get(trace=run, kind="tool")
    assert tool.span_id == f"{asking.context.span_id:016x}:tool_call:0"
    assert tool.parent_span_id == f"{root.context.span_id:016x}"
    assert (tool.started_at.timestamp(), tool.ended_at.timestamp(), tool.latency_ms) == (
        (T0 + 400 * MS) / 1e9, (T0 + 500 * MS) / 1e9, 100,
    )  # fmt: skip
    assert (run.input, run.output, run.usage["total_tokens"]) == (QUESTION, ANSWER, 86)


def test_until_the_answering_call_comes_the_tool_call_has_its_arguments_only():
    spans = sdk_spans(agent())
    asking, answering = _chats(spans)
    _post([asking])
    assert _tool_calls(_run()) == [("quote_room", {"room": "Focus"}, None)]
    revision = _run().revision
    _post([answering])
    assert _tool_calls(_run()) == [("quote_room", {"room": "Focus"}, {"total_cents": 7500})]
    assert _run().revision == revision + 1  # scores computed before the result are stale


def test_an_export_sent_again_changes_nothing():
    spans = sdk_spans(agent())
    _post(spans)
    before = list(Span.objects.order_by("pk").values_list("pk", "span_id"))
    revision = _run().revision
    _post(spans)
    assert list(Span.objects.order_by("pk").values_list("pk", "span_id")) == before
    assert _run().revision == revision


@pytest.mark.parametrize(
    "tool_span",
    [
        {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "quote_room"},
        {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "quote", "gen_ai.tool.call.id": "call_1"},
        {"openinference.span.kind": "TOOL", "tool.name": "lookup", "tool_call.id": "call_1"},
    ],
    ids=["same name", "same call id", "OpenInference call id"],
)
def test_a_tool_span_of_the_agent_records_the_call_and_none_is_derived(tool_span):
    spans = sdk_spans(agent(tool_span=tool_span))
    asking, _ = _chats(spans)
    tool = next(s for s in spans if s.name == "execute_tool")
    _post([asking])
    assert Span.objects.filter(span_id__contains=":tool_call:").count() == 1
    _post([s for s in spans if s is not asking])  # the agent's own tool span arrives: the derived one goes
    (stored,) = Span.objects.filter(kind="tool")
    assert stored.span_id == f"{tool.context.span_id:016x}"


def test_a_tool_span_of_another_name_and_call_leaves_the_call_derived():
    spans = sdk_spans(
        agent(
            tool_span={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "send_mail",
                "gen_ai.tool.call.id": "c9",
            }
        )
    )
    _post(spans)
    assert sorted(t[0] for t in _tool_calls(_run())) == ["quote_room", "send_mail"]


def test_parallel_tool_calls_each_get_their_own_result():
    calls = (_call("call_1", room="Focus"), _call("call_2", room="Studio"), _call("call_3", name="book", room="Focus"))
    results = (("call_2", '{"total_cents": 9900}'), ("call_1", '{"total_cents": 7500}'), ("call_3", "booked"))
    _post(sdk_spans(agent(calls=calls, results=results)))
    assert _tool_calls(_run()) == [
        ("quote_room", {"room": "Focus"}, {"total_cents": 7500}),
        ("quote_room", {"room": "Studio"}, {"total_cents": 9900}),
        ("book", {"room": "Focus"}, "booked"),
    ]


def test_a_tool_call_without_an_id_keeps_its_arguments_and_has_no_result():
    _post(sdk_spans(agent(calls=(_call(None),), results=())))
    assert _tool_calls(_run()) == [("quote_room", {"room": "Focus"}, None)]
    assert Span.objects.get(kind="tool").attributes == {
        "evalsite.derived_from": Span.objects.filter(kind="llm").order_by("started_at").first().span_id
    }


def test_a_model_call_sent_again_with_other_arguments_changes_its_tool_call():
    _post(sdk_spans(agent()))
    first = Span.objects.get(kind="tool")
    asking, _ = _chats(sdk_spans(agent(calls=(_call("call_1", room="Studio"),))))
    _post([asking])  # the same span (same ids) with another output: the later copy wins
    (tool,) = Span.objects.filter(kind="tool")
    assert (tool.span_id, tool.input, tool.output) == (first.span_id, {"room": "Studio"}, {"total_cents": 7500})
    assert tool.pk != first.pk


def test_derived_tool_spans_take_no_room_from_the_spans_a_run_may_have(monkeypatch):
    monkeypatch.setattr("datasets.otlp.ingestion.MAX_SPANS_PER_RUN", 3)
    spans = sdk_spans(agent())
    asking, answering = _chats(spans)
    _post([asking])
    _post([answering, *(s for s in spans if s.parent is None)])  # 3 spans sent, 4 stored
    assert Span.objects.count() == 4
