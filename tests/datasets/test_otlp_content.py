"""Run input and answer found where agent frameworks put them: on the model calls, with system instructions.

openai-agents through OpenInference records an agent span without ``input.value`` /
``output.value``; the question and the answer are only in the model calls'
``llm.input_messages`` / ``llm.output_messages``. The run takes them from there.
"""

import json

from django.test import Client

from datasets.models import Span, Trace
from tests.datasets.test_otlp_mapping import ANSWER, MS, QUESTION, T0, protobuf_body, sdk_spans


def openai_agents_run(tracer):
    """Agent workflow ─ reservo (AGENT) ─ response (LLM, calls quote_room) ─ quote_room (TOOL) ─ response (LLM)."""
    with tracer.start_as_current_span("Agent workflow", start_time=T0, end_on_exit=False) as workflow:
        with tracer.start_as_current_span(
            "reservo", start_time=T0 + MS, end_on_exit=False, attributes={"openinference.span.kind": "AGENT"}
        ) as agent:
            first = {
                "openinference.span.kind": "LLM",
                "llm.model_name": "gpt-4o-mini",
                "llm.input_messages.0.message.role": "system",
                "llm.input_messages.0.message.content": "You quote rooms.",
                "llm.input_messages.1.message.role": "user",
                "llm.input_messages.1.message.content": QUESTION,
                "llm.output_messages.0.message.role": "assistant",
                "llm.output_messages.0.message.tool_calls.0.tool_call.id": "call_1",
                "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "quote_room",
                "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": '{"room": "Focus"}',
                "llm.token_count.prompt": 80,
                "llm.token_count.completion": 9,
            }
            with tracer.start_as_current_span(
                "response", start_time=T0 + 2 * MS, end_on_exit=False, attributes=first
            ) as s:
                s.end(end_time=T0 + 300 * MS)
            tool = {
                "openinference.span.kind": "TOOL",
                "tool.name": "quote_room",
                "input.value": '{"room": "Focus"}',
                "input.mime_type": "application/json",
                "output.value": "7500",
            }
            with tracer.start_as_current_span(
                "quote_room", start_time=T0 + 310 * MS, end_on_exit=False, attributes=tool
            ) as s:
                s.end(end_time=T0 + 320 * MS)
            last = {
                "openinference.span.kind": "LLM",
                "llm.model_name": "gpt-4o-mini",
                "llm.input_messages.0.message.role": "user",
                "llm.input_messages.0.message.content": QUESTION,
                "llm.output_messages.0.message.role": "assistant",
                "llm.output_messages.0.message.content": ANSWER,
            }
            with tracer.start_as_current_span(
                "response", start_time=T0 + 330 * MS, end_on_exit=False, attributes=last
            ) as s:
                s.end(end_time=T0 + 900 * MS)
            agent.end(end_time=T0 + 910 * MS)
        workflow.end(end_time=T0 + 920 * MS)


def _send(actors, spans):
    response = Client().post(
        "/v1/traces",
        data=protobuf_body(spans),
        content_type="application/x-protobuf",
        headers={"Authorization": f"Bearer {actors.acme_key}"},
    )
    assert response.status_code == 200
    return Trace.objects.get(project=actors.acme, trace_id=format(spans[0].context.trace_id, "032x"))


def test_a_root_without_content_takes_the_first_question_and_the_last_answer_of_the_model_calls(actors):
    run = _send(actors, sdk_spans(openai_agents_run))
    assert (run.name, run.input, run.output) == ("Agent workflow", QUESTION, ANSWER)
    tool = Span.objects.get(trace=run, kind="tool")
    assert (tool.name, tool.input, tool.output) == ("quote_room", {"room": "Focus"}, "7500")
    first = Span.objects.filter(trace=run, kind="llm").order_by("started_at").first()
    assert first.output[0]["parts"] == [
        {"type": "tool_call", "name": "quote_room", "id": "call_1", "arguments": {"room": "Focus"}}
    ]


def test_a_root_with_its_own_content_keeps_it(actors):
    def run_with_root_content(tracer):
        with tracer.start_as_current_span(
            "reservo",
            start_time=T0,
            end_on_exit=False,
            attributes={
                "openinference.span.kind": "AGENT",
                "input.value": "root question",
                "output.value": "root answer",
            },
        ) as root:
            attrs = {
                "openinference.span.kind": "LLM",
                "llm.input_messages.0.message.role": "user",
                "llm.input_messages.0.message.content": QUESTION,
                "llm.output_messages.0.message.role": "assistant",
                "llm.output_messages.0.message.content": ANSWER,
            }
            with tracer.start_as_current_span("llm", start_time=T0 + MS, end_on_exit=False, attributes=attrs) as s:
                s.end(end_time=T0 + 5 * MS)
            root.end(end_time=T0 + 10 * MS)

    run = _send(actors, sdk_spans(run_with_root_content))
    assert (run.input, run.output) == ("root question", "root answer")


def test_system_instructions_of_the_current_conventions_lead_the_call_input(actors):
    def call(tracer):
        attrs = {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": "gpt-4o-mini",
            "gen_ai.system_instructions": json.dumps([{"type": "text", "content": "You quote rooms."}]),
            "gen_ai.input.messages": json.dumps([{"role": "user", "parts": [{"type": "text", "content": QUESTION}]}]),
            "gen_ai.output.messages": json.dumps(
                [{"role": "assistant", "parts": [{"type": "text", "content": ANSWER}], "finish_reason": "stop"}]
            ),
        }
        with tracer.start_as_current_span("chat gpt-4o-mini", start_time=T0, end_on_exit=False, attributes=attrs) as s:
            s.end(end_time=T0 + MS)

    run = _send(actors, sdk_spans(call))
    chat = Span.objects.get(trace=run)
    assert [m["role"] for m in chat.input] == ["system", "user"]
    assert "gen_ai.system_instructions" not in chat.attributes
    assert (run.input, run.output) == (QUESTION, ANSWER)


def test_older_openllmetry_attributes_give_the_call_its_messages(actors):
    def call(tracer):
        attrs = {
            "llm.request.type": "chat",
            "gen_ai.system": "openai",
            "gen_ai.request.model": "gpt-4o-mini",
            "gen_ai.prompt.0.role": "user",
            "gen_ai.prompt.0.content": QUESTION,
            "gen_ai.completion.0.role": "assistant",
            "gen_ai.completion.0.content": ANSWER,
            "gen_ai.completion.0.finish_reason": "stop",
            "gen_ai.usage.prompt_tokens": 20,
            "gen_ai.usage.completion_tokens": 7,
        }
        with tracer.start_as_current_span("openai.chat", start_time=T0, end_on_exit=False, attributes=attrs) as s:
            s.end(end_time=T0 + MS)

    run = _send(actors, sdk_spans(call))
    chat = Span.objects.get(trace=run)
    assert chat.kind == "llm"
    assert chat.usage["input_tokens"] == 20 and chat.usage["output_tokens"] == 7 and chat.usage["total_tokens"] == 27
    assert (run.input, run.output) == (QUESTION, ANSWER)
