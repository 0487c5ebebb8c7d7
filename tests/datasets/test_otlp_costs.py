"""Tokens, models and cost of OpenTelemetry runs: sent costs, genai-prices estimates, project prices, unknown models."""

import json
from decimal import Decimal

from django.test import Client
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from datasets.models import Span, Trace
from tests.datasets.test_otlp_mapping import ANSWER, MS, QUESTION, T0, protobuf_body, sdk_spans


def _send(actors, spans, key=None):
    response = Client().post(
        "/v1/traces",
        data=protobuf_body(spans),
        content_type="application/x-protobuf",
        headers={"Authorization": f"Bearer {key or actors.acme_key}"},
    )
    assert response.status_code == 200
    return Trace.objects.get(trace_id=format(spans[0].context.trace_id, "032x"))


def one_call(model, *, provider="openai", extra=None):
    def build(tracer):
        attrs = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": provider,
            "gen_ai.request.model": model,
            "gen_ai.usage.input_tokens": 1_000_000,
            "gen_ai.usage.output_tokens": 100_000,
            "gen_ai.input.messages": json.dumps([{"role": "user", "parts": [{"type": "text", "content": QUESTION}]}]),
        } | (extra or {})
        with tracer.start_as_current_span(f"chat {model}", start_time=T0, end_on_exit=False, attributes=attrs) as s:
            s.end(end_time=T0 + MS)

    return build


def test_a_call_without_a_cost_is_priced_from_the_price_table_and_marked_estimated(actors):
    run = _send(actors, sdk_spans(one_call("gpt-4o-mini")))
    # 1M input tokens at 0.15 USD and 100k output tokens at 0.60 USD per million: 0.21 USD.
    assert run.cost_cents == Decimal("21")
    assert run.cost_detail["estimated"] is True and run.cost_detail["sources"] == ["genai-prices"]
    assert run.cost_detail["price_table"].startswith("genai-prices ")
    span = Span.objects.get(trace=run)
    assert span.usage["cost_source"] == "genai-prices" and span.usage["priced_as"] == "openai/gpt-4o-mini"


def test_cached_tokens_are_counted_and_priced_at_the_cache_price(actors):
    run = _send(actors, sdk_spans(one_call("gpt-4o-mini", extra={"gen_ai.usage.cache_read.input_tokens": 500_000})))
    # 500k uncached at 0.15, 500k cached at 0.075, 100k output at 0.60 per million: 0.1725 USD.
    assert run.cost_cents == Decimal("17.25")
    assert run.usage == {
        "input_tokens": 1_000_000, "output_tokens": 100_000, "cache_read_tokens": 500_000, "total_tokens": 1_100_000,
    }  # fmt: skip


def test_a_cost_the_span_sends_wins_and_is_not_estimated(actors):
    run = _send(actors, sdk_spans(one_call("gpt-4o-mini", extra={"gen_ai.usage.cost": 0.5})))
    assert run.cost_cents == Decimal("50")
    assert run.cost_detail == {"estimated": False, "sources": ["reported"]}


def test_a_model_with_no_known_price_leaves_the_cost_empty_and_cost_budget_abstains_naming_it(actors):
    run = _send(actors, sdk_spans(one_call("reservo-llama-3-8b-ft", provider="vllm")))
    assert run.cost_cents is None
    assert run.cost_detail == {"unknown_price": ["reservo-llama-3-8b-ft"]}
    assert run.models_used == ["reservo-llama-3-8b-ft"] and run.usage["input_tokens"] == 1_000_000

    body = {"scorers": ["cost_budget"], "config": {"cost_budget": {"cents": 5}}, "trace_ids": [run.trace_id]}
    answer = actors.api().post("/v1/api/score", body, format="json").json()
    assert answer["scores"] == []
    [skipped] = answer["skipped"]
    assert skipped["reason"] == "unknown_price"
    assert skipped["detail"]["models"] == ["reservo-llama-3-8b-ft"]


def test_the_projects_own_price_prices_a_self_hosted_model(actors):
    api = actors.api()
    response = api.put(
        "/v1/api/prices/reservo-llama-3-8b-ft", {"input_per_mtok": 0.2, "output_per_mtok": 0.6}, format="json"
    )
    assert response.status_code == 200, response.content
    assert response.json()["model"] == "reservo-llama-3-8b-ft"
    run = _send(actors, sdk_spans(one_call("reservo-llama-3-8b-ft", provider="vllm")))
    # 1M input at 0.20 and 100k output at 0.60: 0.26 USD.
    assert run.cost_cents == Decimal("26")
    assert run.cost_detail == {"estimated": True, "sources": ["override"]}
    # Another project's price does not apply here.
    other = _send(actors, sdk_spans(one_call("reservo-llama-3-8b-ft", provider="vllm")), key=actors.umbrella_key)
    assert other.cost_cents is None


def test_the_prices_api_says_what_it_knows(actors):
    api = actors.api()
    answer = api.get("/v1/api/prices", {"model": "gpt-4o-mini", "provider": "openai"}).json()
    assert answer["price_table"]["package"] == "genai-prices" and answer["price_table"]["models"] > 100
    assert answer["lookup"]["known"] is True and answer["lookup"]["source"] == "genai-prices"
    assert answer["lookup"]["per_million_tokens"]["input"] == 0.15
    unknown = api.get("/v1/api/prices", {"model": "reservo-llama-3-8b-ft"}).json()["lookup"]
    assert unknown == {"model": "reservo-llama-3-8b-ft", "known": False, "reason": "unknown_price", "source": None}

    api.put("/v1/api/prices/reservo-llama-3-8b-ft", {"input_per_mtok": 0.2, "output_per_mtok": 0.6}, format="json")
    answer = api.get("/v1/api/prices", {"model": "reservo-llama-3-8b-ft"}).json()
    assert answer["lookup"]["source"] == "override" and answer["lookup"]["per_million_tokens"]["cache_read"] == 0.2
    assert [o["model"] for o in answer["overrides"]] == ["reservo-llama-3-8b-ft"]
    assert actors.outsider_api().get("/v1/api/prices").json()["overrides"] == []
    assert actors.outsider_api().delete("/v1/api/prices/reservo-llama-3-8b-ft").status_code == 404
    assert api.delete("/v1/api/prices/reservo-llama-3-8b-ft").status_code == 204
    assert api.get("/v1/api/prices").json()["overrides"] == []


def test_a_bad_price_is_a_400_naming_the_field(actors):
    response = actors.api().put("/v1/api/prices/m", {"input_per_mtok": -1, "output_per_mtok": "x"}, format="json")
    assert response.status_code == 400
    assert {e["field"] for e in response.json()["errors"]} == {"input_per_mtok", "output_per_mtok"}
    assert actors.api("").get("/v1/api/prices").status_code == 401


def test_a_price_sent_as_text_or_a_boolean_is_a_400_naming_the_field(actors):
    response = actors.api().put("/v1/api/prices/m", {"input_per_mtok": "1", "output_per_mtok": True}, format="json")
    assert response.status_code == 400
    errors = {e["field"]: e["message"] for e in response.json()["errors"]}
    assert errors == {
        "input_per_mtok": "must be a JSON number, not a string",
        "output_per_mtok": "must be a JSON number, not true or false",
    }
    assert actors.api().get("/v1/api/prices").json()["overrides"] == []


def vercel_ai_sdk_run(tracer):
    """generateText with one tool step, as the AI SDK's experimental_telemetry records it."""
    root_attrs = {
        "ai.operationId": "ai.generateText",
        "operation.name": "ai.generateText reservo",
        "ai.model.id": "gpt-4o-mini",
        "ai.model.provider": "openai.chat",
        "ai.prompt": json.dumps({"system": "You quote rooms.", "prompt": QUESTION}),
        "ai.response.text": ANSWER,
        "ai.usage.promptTokens": 300,
        "ai.usage.completionTokens": 40,
    }
    with tracer.start_as_current_span(
        "ai.generateText", start_time=T0, end_on_exit=False, attributes=root_attrs
    ) as root:
        step = {
            "ai.operationId": "ai.generateText.doGenerate",
            "ai.model.id": "gpt-4o-mini",
            "ai.model.provider": "openai.chat",
            "ai.prompt.messages": json.dumps(
                [
                    {"role": "system", "content": "You quote rooms."},
                    {"role": "user", "content": [{"type": "text", "text": QUESTION}]},
                ]
            ),
            "ai.response.toolCalls": json.dumps(
                [
                    {
                        "toolCallType": "function",
                        "toolCallId": "call_1",
                        "toolName": "quote_room",
                        "args": '{"room":"Focus"}',
                    }
                ]
            ),
            "ai.response.finishReason": "tool-calls",
            "gen_ai.system": "openai.chat",
            "gen_ai.request.model": "gpt-4o-mini",
            "gen_ai.usage.input_tokens": 120,
            "gen_ai.usage.output_tokens": 20,
        }
        with tracer.start_as_current_span(
            "ai.generateText.doGenerate", start_time=T0 + MS, end_on_exit=False, attributes=step
        ) as s:
            s.end(end_time=T0 + 100 * MS)
        tool = {
            "ai.operationId": "ai.toolCall",
            "ai.toolCall.name": "quote_room",
            "ai.toolCall.id": "call_1",
            "ai.toolCall.args": '{"room":"Focus"}',
            "ai.toolCall.result": '{"total_cents":7500}',
        }
        with tracer.start_as_current_span(
            "ai.toolCall", start_time=T0 + 110 * MS, end_on_exit=False, attributes=tool
        ) as s:
            s.end(end_time=T0 + 120 * MS)
        step = {
            "ai.operationId": "ai.generateText.doGenerate",
            "ai.model.id": "gpt-4o-mini",
            "ai.prompt.messages": json.dumps([{"role": "user", "content": [{"type": "text", "text": QUESTION}]}]),
            "ai.response.text": ANSWER,
            "ai.response.finishReason": "stop",
            "gen_ai.request.model": "gpt-4o-mini",
            "gen_ai.usage.input_tokens": 180,
            "gen_ai.usage.output_tokens": 20,
        }
        with tracer.start_as_current_span(
            "ai.generateText.doGenerate", start_time=T0 + 130 * MS, end_on_exit=False, attributes=step
        ) as s:
            s.end(end_time=T0 + 300 * MS)
        root.end(end_time=T0 + 310 * MS)


def test_a_vercel_ai_sdk_run_arrives_whole_and_its_tokens_are_counted_once(actors):
    run = _send(actors, sdk_spans(vercel_ai_sdk_run))
    assert (run.input, run.output) == (QUESTION, ANSWER)
    spans = {s.kind: s for s in Span.objects.filter(trace=run)}
    assert sorted(Span.objects.filter(trace=run).values_list("kind", flat=True)) == ["agent", "llm", "llm", "tool"]
    assert (spans["tool"].name, spans["tool"].input, spans["tool"].output) == (
        "quote_room", {"room": "Focus"}, {"total_cents": 7500},
    )  # fmt: skip
    # The model calls' tokens (120+180 in, 20+20 out), not added again from the generateText span's total.
    assert run.usage == {"input_tokens": 300, "output_tokens": 40, "total_tokens": 340}
    assert run.models_used == ["gpt-4o-mini"]
    first = Span.objects.filter(trace=run, kind="llm").order_by("started_at").first()
    assert first.output[0]["parts"][0] == {
        "type": "tool_call", "name": "quote_room", "id": "call_1", "arguments": {"room": "Focus"},
    }  # fmt: skip


def test_a_call_whose_tokens_price_beyond_what_a_cost_can_hold_is_rejected_alone(actors):
    def two_runs(tracer):
        one_call("gpt-4o-mini")(tracer)
        one_call("gpt-4o", extra={"gen_ai.usage.input_tokens": 2**40, "gen_ai.usage.output_tokens": 2**40})(tracer)

    good, bad = sdk_spans(two_runs)
    response = Client().post(
        "/v1/traces",
        data=protobuf_body([good, bad]),
        content_type="application/x-protobuf",
        headers={"Authorization": f"Bearer {actors.acme_key}"},
    )
    assert response.status_code == 200
    answer = ExportTraceServiceResponse.FromString(response.content).partial_success
    assert answer.rejected_spans == 1
    bad_id = format(bad.context.span_id, "016x")
    assert f"span {bad_id}" in answer.error_message and "cost" in answer.error_message
    assert Trace.objects.filter(trace_id=format(good.context.trace_id, "032x")).exists()
    assert not Trace.objects.filter(trace_id=format(bad.context.trace_id, "032x")).exists()


def test_a_token_count_beyond_64_bits_is_not_counted_or_priced(actors):
    run = _send(actors, sdk_spans(one_call("gpt-4o-mini", extra={"gen_ai.usage.input_tokens": 1e300})))
    span = Span.objects.get(trace=run)
    # Kept as sent (PostgreSQL's jsonb reads it back as the integer it equals).
    assert "input_tokens" not in span.usage and float(span.attributes["gen_ai.usage.input_tokens"]) == 1e300
    assert run.cost_cents == Decimal("6")  # the 100k output tokens alone: 0.06 USD
