"""OTel spans into evalsite span fields: GenAI conventions, OpenInference, older shapes.

Spans are made by the OpenTelemetry SDK and encoded by its OTLP encoder, as an
instrumented agent would send them; the agent trees built here are reused by the
endpoint and exporter tests.
"""

import json
import subprocess
import sys
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, Status, StatusCode

from datasets.otlp.decoding import request_decode
from datasets.otlp.mapping import SpanRejected, run_input, run_output, span_map
from datasets.otlp.records import OtlpEvent, OtlpSpan

T0 = 1_790_000_000_000_000_000  # 2026-09-21T14:13:20Z in nanoseconds
MS = 1_000_000
QUESTION = "How much is Focus pro for 3 hours?"
ANSWER = "Focus pro for 3 hours costs 75.00 EUR."


def sdk_spans(build, *, resource=None):
    """Finished SDK spans (``ReadableSpan``) of what ``build(tracer)`` records."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create(resource or {"service.name": "reservo"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    build(provider.get_tracer("reservo.agent", "2.1.0"))
    provider.shutdown()
    return list(exporter.get_finished_spans())


def protobuf_body(spans):
    """The bytes the OTLP/HTTP protobuf exporter sends for ``spans``."""
    return encode_spans(spans).SerializeToString()


def genai_agent(tracer, *, question=QUESTION, answer=ANSWER, tool_status=None):
    """A booking agent instrumented with the OpenTelemetry GenAI conventions.

    invoke_agent reservo
    ├── chat gpt-4o-mini          (asks for quote_room)
    ├── execute_tool quote_room
    └── chat gpt-4o-mini          (answers)
    """
    user = [{"role": "user", "parts": [{"type": "text", "content": question}]}]
    call = {"type": "tool_call", "id": "call_1", "name": "quote_room", "arguments": {"room": "Focus", "tier": "pro"}}
    with tracer.start_as_current_span(
        "invoke_agent reservo",
        kind=SpanKind.INTERNAL,
        start_time=T0,
        end_on_exit=False,
        attributes={
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": "reservo",
            "gen_ai.input.messages": json.dumps(user),
            "gen_ai.output.messages": json.dumps(
                [{"role": "assistant", "parts": [{"type": "text", "content": answer}], "finish_reason": "stop"}]
            ),
        },
    ) as root:
        with tracer.start_as_current_span(
            "chat gpt-4o-mini",
            kind=SpanKind.CLIENT,
            start_time=T0 + 10 * MS,
            end_on_exit=False,
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.provider.name": "openai",
                "gen_ai.request.model": "gpt-4o-mini",
                "gen_ai.usage.input_tokens": 120,
                "gen_ai.usage.output_tokens": 18,
                "gen_ai.input.messages": json.dumps(user),
                "gen_ai.output.messages": json.dumps(
                    [{"role": "assistant", "parts": [call], "finish_reason": "tool_call"}]
                ),
            },
        ) as chat:
            chat.end(end_time=T0 + 410 * MS)
        with tracer.start_as_current_span(
            "execute_tool quote_room",
            start_time=T0 + 420 * MS,
            end_on_exit=False,
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "quote_room",
                "gen_ai.tool.call.id": "call_1",
                "gen_ai.tool.call.arguments": json.dumps({"room": "Focus", "tier": "pro", "hours": 3}),
                "gen_ai.tool.call.result": json.dumps({"total_cents": 7500}),
            },
        ) as tool:
            if tool_status:
                tool.set_status(tool_status)
            tool.end(end_time=T0 + 470 * MS)
        with tracer.start_as_current_span(
            "chat gpt-4o-mini",
            kind=SpanKind.CLIENT,
            start_time=T0 + 480 * MS,
            end_on_exit=False,
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": "gpt-4o-mini",
                "gen_ai.usage.input_tokens": 160,
                "gen_ai.usage.output_tokens": 14,
            },
        ) as chat:
            chat.end(end_time=T0 + 1180 * MS)
        root.end(end_time=T0 + 1200 * MS)


def openinference_agent(tracer, *, question=QUESTION, answer=ANSWER):
    """The same agent instrumented with OpenInference (Phoenix, Arize, LlamaIndex, ...)."""
    with tracer.start_as_current_span(
        "reservo",
        start_time=T0,
        end_on_exit=False,
        attributes={
            "openinference.span.kind": "AGENT",
            "input.value": question,
            "input.mime_type": "text/plain",
            "output.value": answer,
            "output.mime_type": "text/plain",
            "session.id": "s-42",
        },
    ) as root:
        with tracer.start_as_current_span(
            "ChatCompletion",
            start_time=T0 + 10 * MS,
            end_on_exit=False,
            attributes={
                "openinference.span.kind": "LLM",
                "llm.model_name": "gpt-4o-mini",
                "llm.input_messages.0.message.role": "system",
                "llm.input_messages.0.message.content": "You book rooms.",
                "llm.input_messages.1.message.role": "user",
                "llm.input_messages.1.message.content": question,
                "llm.output_messages.0.message.role": "assistant",
                "llm.output_messages.0.message.tool_calls.0.tool_call.id": "call_1",
                "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "quote_room",
                "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": '{"room": "Focus"}',
                "llm.token_count.prompt": 120,
                "llm.token_count.completion": 18,
                "llm.token_count.total": 138,
                "llm.cost.total": 0.0042,
                "llm.invocation_parameters": '{"temperature": 0}',
            },
        ) as llm:
            llm.end(end_time=T0 + 400 * MS)
        with tracer.start_as_current_span(
            "quote_room",
            start_time=T0 + 420 * MS,
            end_on_exit=False,
            attributes={
                "openinference.span.kind": "TOOL",
                "tool.name": "quote_room",
                "input.value": json.dumps({"room": "Focus", "tier": "pro", "hours": 3}),
                "input.mime_type": "application/json",
                "output.value": json.dumps({"total_cents": 7500}),
                "output.mime_type": "application/json",
            },
        ) as tool:
            tool.end(end_time=T0 + 470 * MS)
        with tracer.start_as_current_span(
            "retrieve",
            start_time=T0 + 475 * MS,
            end_on_exit=False,
            attributes={
                "openinference.span.kind": "RETRIEVER",
                "input.value": "Focus room prices",
                "retrieval.documents.0.document.id": "prices.md",
                "retrieval.documents.0.document.content": "Focus pro: 25 EUR/h",
                "retrieval.documents.0.document.score": 0.92,
            },
        ) as retriever:
            retriever.end(end_time=T0 + 478 * MS)
        with tracer.start_as_current_span(
            "ChatCompletion",
            start_time=T0 + 480 * MS,
            end_on_exit=False,
            attributes={
                "openinference.span.kind": "LLM",
                "llm.model_name": "gpt-4o-mini",
                "llm.output_messages.0.message.role": "assistant",
                "llm.output_messages.0.message.content": answer,
                "llm.token_count.prompt": 160,
                "llm.token_count.completion": 14,
                "llm.cost.total": 0.0021,
            },
        ) as llm:
            llm.end(end_time=T0 + 1180 * MS)
        root.end(end_time=T0 + 1200 * MS)


def _mapped(spans):
    decoded = request_decode(
        protobuf_body(spans), content_type="application/x-protobuf", content_encoding=None, limit=10**7
    )
    return [span_map(s) for s in decoded]


def _by_name(mapped):
    out = {}
    for span in mapped:
        out.setdefault(span.name, []).append(span)
    return out


def test_it_maps_a_genai_agent_tree_to_kinds_names_tools_models_and_usage():
    mapped = _mapped(sdk_spans(genai_agent))
    spans = _by_name(mapped)
    root = spans["reservo"][0]
    assert root.kind == "agent" and root.parent_span_id is None
    assert root.started_at == datetime(2026, 9, 21, 14, 13, 20, tzinfo=UTC)
    assert root.latency_ms == 1200
    first_chat, second_chat = sorted(spans["chat gpt-4o-mini"], key=lambda s: s.started_at)
    assert first_chat.kind == "llm" and first_chat.model == "gpt-4o-mini"
    assert first_chat.usage == {"input_tokens": 120, "output_tokens": 18, "total_tokens": 138}
    assert first_chat.parent_span_id == root.span_id
    assert first_chat.output[0]["parts"][0]["name"] == "quote_room"
    assert second_chat.usage == {"input_tokens": 160, "output_tokens": 14, "total_tokens": 174}
    tool = spans["quote_room"][0]
    assert tool.kind == "tool"
    assert tool.input == {"room": "Focus", "tier": "pro", "hours": 3}
    assert tool.output == {"total_cents": 7500}
    assert tool.status == "ok" and tool.error is None
    assert all(len(s.trace_id) == 32 and len(s.span_id) == 16 for s in mapped)
    assert len({s.trace_id for s in mapped}) == 1


def test_it_gives_the_run_the_root_question_and_the_answer_text():
    root = _by_name(_mapped(sdk_spans(genai_agent)))["reservo"][0]
    assert run_input(root.input) == QUESTION
    assert run_output(root.output) == ANSWER


def test_it_keeps_unmapped_attributes_and_drops_the_mapped_ones():
    spans = _by_name(_mapped(sdk_spans(genai_agent)))
    chat = min(spans["chat gpt-4o-mini"], key=lambda s: s.started_at)
    assert chat.attributes["gen_ai.provider.name"] == "openai"
    assert chat.attributes["gen_ai.operation.name"] == "chat"
    assert chat.attributes["otel.span_kind"] == "client"
    assert chat.attributes["otel.scope"] == {"name": "reservo.agent", "version": "2.1.0"}
    assert chat.attributes["otel.resource"]["service.name"] == "reservo"
    for mapped_key in ("gen_ai.request.model", "gen_ai.usage.input_tokens", "gen_ai.input.messages"):
        assert mapped_key not in chat.attributes
    tool = spans["quote_room"][0]
    assert tool.attributes["gen_ai.tool.call.id"] == "call_1"
    assert "gen_ai.tool.call.arguments" not in tool.attributes and "gen_ai.tool.name" not in tool.attributes


def test_it_maps_an_openinference_agent_tree():
    spans = _by_name(_mapped(sdk_spans(openinference_agent)))
    root = spans["reservo"][0]
    assert root.kind == "agent"
    assert run_input(root.input) == QUESTION and run_output(root.output) == ANSWER
    first, second = sorted(spans["ChatCompletion"], key=lambda s: s.started_at)
    assert first.kind == "llm" and first.model == "gpt-4o-mini"
    assert first.usage == {"input_tokens": 120, "output_tokens": 18, "total_tokens": 138}
    assert first.cost_cents == Decimal("0.42")  # llm.cost.total is USD
    assert [m["role"] for m in first.input] == ["system", "user"]
    assert first.input[1]["parts"] == [{"type": "text", "content": QUESTION}]
    assert first.output[0]["parts"] == [
        {"type": "tool_call", "name": "quote_room", "id": "call_1", "arguments": {"room": "Focus"}}
    ]
    assert first.attributes["llm.invocation_parameters"] == '{"temperature": 0}'
    assert second.cost_cents == Decimal("0.21")
    assert second.output[0]["parts"] == [{"type": "text", "content": ANSWER}]
    tool = spans["quote_room"][0]
    assert tool.kind == "tool"
    assert tool.input == {"room": "Focus", "tier": "pro", "hours": 3}
    assert tool.output == {"total_cents": 7500}
    retriever = spans["retrieve"][0]
    assert retriever.kind == "retrieval"
    assert retriever.input == "Focus room prices"
    assert retriever.output == [{"id": "prices.md", "content": "Focus pro: 25 EUR/h", "score": 0.92}]
    assert root.attributes["session.id"] == "s-42"


@pytest.mark.parametrize(
    ("attributes", "kind"),
    [
        ({"gen_ai.operation.name": "text_completion"}, "llm"),
        ({"gen_ai.operation.name": "generate_content"}, "llm"),
        ({"gen_ai.operation.name": "embeddings"}, "llm"),
        ({"gen_ai.operation.name": "create_agent"}, "agent"),
        ({"gen_ai.operation.name": "invoke_workflow"}, "agent"),
        ({"gen_ai.operation.name": "retrieval"}, "retrieval"),
        ({"openinference.span.kind": "EMBEDDING"}, "llm"),
        ({"openinference.span.kind": "reranker"}, "retrieval"),
        ({"openinference.span.kind": "CHAIN"}, "other"),
        ({"openinference.span.kind": "GUARDRAIL"}, "other"),
        ({"tool.name": "search"}, "tool"),
        ({"gen_ai.request.model": "llama3"}, "llm"),
        ({"http.method": "GET"}, "other"),
        ({"gen_ai.operation.name": "execute_tool", "openinference.span.kind": "LLM"}, "tool"),
    ],
)
def test_it_derives_the_kind_from_the_conventions(attributes, kind):
    assert span_map(_span(attributes=attributes)).kind == kind


def test_it_reads_the_older_prompt_and_completion_token_names():
    span = span_map(_span(attributes={"gen_ai.usage.prompt_tokens": 7, "gen_ai.usage.completion_tokens": 3.0, "x": 1}))
    assert span.usage == {"input_tokens": 7, "output_tokens": 3, "total_tokens": 10}
    assert span.attributes == {"x": 1}


def test_it_reads_messages_from_the_older_per_message_and_choice_events():
    events = [
        OtlpEvent("gen_ai.system.message", T0, {"content": "You book rooms."}),
        OtlpEvent("gen_ai.user.message", T0, {"content": QUESTION}),
        OtlpEvent(
            "gen_ai.choice", T0, {"index": 0, "finish_reason": "stop", "message": json.dumps({"content": ANSWER})}
        ),
        OtlpEvent("exception", T0, {"exception.type": "Timeout"}),
    ]
    span = span_map(_span(attributes={"gen_ai.operation.name": "chat"}, events=events))
    assert [m["role"] for m in span.input] == ["system", "user"]
    assert run_input(span.input) == QUESTION
    assert span.output == [
        {"role": "assistant", "parts": [{"type": "text", "content": ANSWER}], "finish_reason": "stop"}
    ]
    # Message events are mapped; the others stay on the span.
    assert [e["name"] for e in span.attributes["otel.events"]] == ["exception"]


def test_it_reads_messages_from_event_content_json_and_prompt_events():
    events = [
        OtlpEvent("gen_ai.user.message", T0, {"gen_ai.event.content": json.dumps({"content": QUESTION})}),
        OtlpEvent(
            "gen_ai.content.completion",
            T0,
            {"gen_ai.completion": json.dumps([{"role": "assistant", "content": ANSWER}])},
        ),
    ]
    span = span_map(_span(attributes={"gen_ai.operation.name": "chat"}, events=events))
    assert run_input(span.input) == QUESTION
    assert run_output(span.output) == ANSWER
    assert "otel.events" not in span.attributes


def test_it_reads_flattened_prompt_and_completion_attributes():
    span = span_map(
        _span(
            attributes={
                "gen_ai.request.model": "claude",
                "gen_ai.prompt.0.role": "user",
                "gen_ai.prompt.0.content": QUESTION,
                "gen_ai.completion.0.role": "assistant",
                "gen_ai.completion.0.content": ANSWER,
                "gen_ai.completion.0.finish_reason": "stop",
                "gen_ai.prompt.name": "booking-v3",
            }
        )
    )
    assert span.kind == "llm" and span.model == "claude"
    assert run_input(span.input) == QUESTION and run_output(span.output) == ANSWER
    assert span.output[0]["finish_reason"] == "stop"
    assert span.attributes == {"gen_ai.prompt.name": "booking-v3"}


def test_it_reads_the_deprecated_prompt_and_completion_attributes():
    span = span_map(
        _span(
            attributes={
                "gen_ai.prompt": json.dumps([{"role": "user", "content": [{"type": "text", "text": QUESTION}]}]),
                "gen_ai.completion": ANSWER,
            }
        )
    )
    assert run_input(span.input) == QUESTION
    assert run_output(span.output) == ANSWER


def test_it_converts_openai_tool_calls_and_tool_results_into_parts():
    messages = [
        {
            "role": "assistant",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "quote_room", "arguments": '{"room": "Focus"}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": '{"total_cents": 7500}'},
    ]
    span = span_map(_span(attributes={"gen_ai.input.messages": json.dumps(messages)}))
    assert span.input[0]["parts"] == [
        {"type": "tool_call", "name": "quote_room", "id": "c1", "arguments": {"room": "Focus"}}
    ]
    assert span.input[1]["parts"] == [{"type": "tool_call_response", "id": "c1", "response": {"total_cents": 7500}}]


def test_it_takes_the_error_from_the_status_or_the_exception_event():
    with_message = span_map(_span(status_code=2, status_message="room service down"))
    assert (with_message.status, with_message.error) == ("error", "room service down")
    events = [OtlpEvent("exception", T0, {"exception.type": "TimeoutError", "exception.message": "no answer in 30s"})]
    from_event = span_map(_span(status_code=2, events=events))
    assert (from_event.status, from_event.error) == ("error", "TimeoutError: no answer in 30s")
    assert from_event.attributes["otel.events"][0]["attributes"]["exception.type"] == "TimeoutError"
    ok = span_map(_span(status_code=1, status_message="ignored"))
    assert (ok.status, ok.error) == ("ok", None)


def test_a_failed_tool_from_the_sdk_is_an_error_span():
    spans = _by_name(_mapped(sdk_spans(lambda t: genai_agent(t, tool_status=Status(StatusCode.ERROR, "timeout")))))
    assert (spans["quote_room"][0].status, spans["quote_room"][0].error) == ("error", "timeout")
    assert spans["reservo"][0].status == "ok"


@pytest.mark.parametrize(
    ("attributes", "cents"),
    [
        ({"llm.cost.total": 0.5}, Decimal("50")),
        ({"llm.cost.prompt": 0.001, "llm.cost.completion": 0.002}, Decimal("0.3")),
        ({"evalsite.cost_cents": 1.25, "llm.cost.total": 9}, Decimal("1.25")),
        ({"llm.cost.total": -1}, None),
        ({"llm.cost.total": "0.5"}, None),
        ({"llm.cost.total": 10**7}, None),
        ({}, None),
    ],
)
def test_it_reads_the_cost_in_cents(attributes, cents):
    span = span_map(_span(attributes=attributes))
    assert span.cost_cents == cents
    if cents is None and attributes:
        assert set(attributes) <= set(span.attributes)  # unusable costs are kept as sent


def test_it_copies_link_attributes_from_the_resource_unless_the_span_has_its_own():
    resource = {"service.name": "reservo", "evalsite.experiment": "v2", "evalsite.dataset": "reservo"}
    span = span_map(_span(attributes={"evalsite.experiment": "v3", "evalsite.case": 7}, resource=resource))
    assert span.attributes["evalsite.experiment"] == "v3"
    assert span.attributes["evalsite.case"] == 7
    assert span.attributes["evalsite.dataset"] == "reservo"


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"trace_id": b""}, "traceId is missing"),
        ({"trace_id": b"\x00" * 16}, "traceId is all zeros"),
        ({"trace_id": b"\x01" * 15}, "traceId 010101010101010101010101010101 is 15 bytes; it must be 16"),
        ({"span_id": b"\x00" * 8}, "spanId is all zeros"),
        ({"parent_span_id": b"\x07" * 3}, "parentSpanId 070707 is 3 bytes"),
        ({"parent_span_id": b"\x02" * 8}, "names itself as its parent"),
        ({"start_time_unix_nano": 0}, "has no startTimeUnixNano"),
        ({"end_time_unix_nano": 0}, "has no endTimeUnixNano"),
        ({"end_time_unix_nano": T0 - 1}, "ends before it starts"),
        ({"id_problem": "traceId 'xyz' is neither 32 hex digits nor the base64 of 16 bytes"}, "neither 32 hex"),
    ],
)
def test_it_rejects_spans_it_cannot_use_and_says_why(fields, message):
    with pytest.raises(SpanRejected, match=message):
        span_map(_span(**fields))


def test_it_truncates_long_names_and_models():
    span = span_map(_span(name="x" * 500, attributes={"gen_ai.request.model": "m" * 500}))
    assert len(span.name) == 200 and len(span.model) == 200


def test_the_mapping_imports_nothing_of_django():
    code = "import sys, datasets.otlp.mapping; print(sorted({m.split('.')[0] for m in sys.modules} & {'django', 'rest_framework', 'celery'}))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=Path(__file__).parents[2]
    )
    assert out.stdout.strip() == "[]"


def _span(*, attributes=None, events=None, resource=None, **fields):
    values = {
        "where": "resourceSpans[0].scopeSpans[0].spans[0]",
        "trace_id": b"\x01" * 16,
        "span_id": b"\x02" * 8,
        "parent_span_id": b"",
        "name": "step",
        "kind": None,
        "start_time_unix_nano": T0,
        "end_time_unix_nano": T0 + 5 * MS,
        "attributes": attributes or {},
        "events": events or [],
        "resource": resource or {},
    }
    values.update(fields)
    return OtlpSpan(**values)


def test_a_messages_attribute_that_holds_no_messages_is_kept_as_sent():
    span = span_map(_span(attributes={"gen_ai.operation.name": "chat", "gen_ai.input.messages": '{"foo": 1}'}))
    assert span.input is None
    assert span.attributes["gen_ai.input.messages"] == '{"foo": 1}'
