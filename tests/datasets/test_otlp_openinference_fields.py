"""OpenInference's run-level attributes and token details, by the package's own attribute names.

``tag.tags`` and ``metadata`` (what ``openinference.instrumentation.using_attributes``
sets) become the run's tags and metadata; reasoning tokens are counted; a model call
with a model and tokens but no provider is priced (or named as of unknown price).
"""

import json
from decimal import Decimal

from django.test import Client
from openinference.semconv.trace import OpenInferenceSpanKindValues, SpanAttributes

from datasets.models import Span, Trace
from tests.datasets.test_otlp_mapping import MS, T0, protobuf_body, sdk_spans


def _send(actors, spans):
    response = Client().post(
        "/v1/traces",
        data=protobuf_body(spans),
        content_type="application/x-protobuf",
        headers={"Authorization": f"Bearer {actors.acme_key}"},
    )
    assert response.status_code == 200, response.content
    return Trace.objects.get(trace_id=format(spans[0].context.trace_id, "032x"))


def llm_call(model, **extra):
    """One OpenInference LLM span: a model and its token counts, no provider unless given."""

    def build(tracer):
        attrs = {
            SpanAttributes.OPENINFERENCE_SPAN_KIND: OpenInferenceSpanKindValues.LLM.value,
            SpanAttributes.LLM_MODEL_NAME: model,
            SpanAttributes.LLM_TOKEN_COUNT_PROMPT: 1_000_000,
            SpanAttributes.LLM_TOKEN_COUNT_COMPLETION: 100_000,
            SpanAttributes.INPUT_VALUE: "How much is Focus pro for 3 hours?",
            SpanAttributes.OUTPUT_VALUE: "75.00 EUR.",
            **extra,
        }
        with tracer.start_as_current_span("ChatCompletion", start_time=T0, end_on_exit=False, attributes=attrs) as s:
            s.end(end_time=T0 + MS)

    return build


def test_it_makes_tag_tags_the_runs_tags(actors):
    run = _send(actors, sdk_spans(llm_call("gpt-4o-mini", **{SpanAttributes.TAG_TAGS: ["beta", "eu", "beta", " "]})))

    assert run.tags == ["beta", "eu"]


def test_it_adds_the_metadata_json_to_the_runs_metadata(actors):
    metadata = json.dumps({"tenant": "acme", "prompt_version": 3})

    run = _send(actors, sdk_spans(llm_call("gpt-4o-mini", **{SpanAttributes.METADATA: metadata})))

    assert run.metadata["tenant"] == "acme" and run.metadata["prompt_version"] == 3
    assert run.metadata["service.name"] == "reservo"  # the resource stays


def test_it_keeps_metadata_that_is_not_a_json_object_on_the_span_only(actors):
    run = _send(actors, sdk_spans(llm_call("gpt-4o-mini", **{SpanAttributes.METADATA: "not json"})))

    assert set(run.metadata) >= {"service.name"} and "not json" not in json.dumps(run.metadata)
    assert Span.objects.get(trace=run).attributes[SpanAttributes.METADATA] == "not json"


def test_it_counts_reasoning_tokens(actors):
    extra = {SpanAttributes.LLM_TOKEN_COUNT_COMPLETION_DETAILS_REASONING: 40_000}

    run = _send(actors, sdk_spans(llm_call("gpt-4o-mini", **extra)))

    span = Span.objects.get(trace=run)
    assert span.usage["reasoning_tokens"] == 40_000
    assert span.usage["total_tokens"] == 1_100_000  # reasoning tokens are part of the output tokens
    assert SpanAttributes.LLM_TOKEN_COUNT_COMPLETION_DETAILS_REASONING not in span.attributes
    assert run.usage["reasoning_tokens"] == 40_000


def test_a_call_with_a_model_and_tokens_but_no_provider_is_priced(actors):
    run = _send(actors, sdk_spans(llm_call("gpt-4o-mini")))

    # 1M input tokens at 0.15 USD and 100k output tokens at 0.60 USD per million: 0.21 USD.
    assert run.cost_cents == Decimal("21")
    assert run.cost_detail["sources"] == ["genai-prices"]
    assert Span.objects.get(trace=run).usage["priced_as"] == "openai/gpt-4o-mini"


def test_a_call_with_no_provider_and_an_unknown_model_names_it_as_unknown_price(actors):
    run = _send(actors, sdk_spans(llm_call("reservo-llama-3-8b-ft")))

    assert run.cost_cents is None
    assert run.cost_detail == {"unknown_price": ["reservo-llama-3-8b-ft"]}


def test_a_call_with_only_a_total_token_count_is_named_as_unknown_price(actors):
    # A total cannot be split into input and output tokens, so it cannot be priced; left
    # unpriced silently, the run's cost would be understated by this call.
    def build(tracer):
        attrs = {
            SpanAttributes.OPENINFERENCE_SPAN_KIND: OpenInferenceSpanKindValues.LLM.value,
            SpanAttributes.LLM_MODEL_NAME: "gpt-4o-mini",
            SpanAttributes.LLM_TOKEN_COUNT_TOTAL: 1_100_000,
        }
        with tracer.start_as_current_span("ChatCompletion", start_time=T0, end_on_exit=False, attributes=attrs) as s:
            s.end(end_time=T0 + MS)

    run = _send(actors, sdk_spans(build))

    assert run.cost_cents is None
    assert run.cost_detail == {"unknown_price": ["gpt-4o-mini"]}
