"""``POST /v1/traces``: OTLP/HTTP exports become runs, answered in the request's content type."""

import base64
import gzip
import json
from decimal import Decimal

import pytest
from django.db import OperationalError
from django.test import Client
from google.protobuf import json_format
from google.rpc import code_pb2, status_pb2
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from opentelemetry.trace import Status, StatusCode

from datasets.models import Dataset, Experiment, GoldenCase, Span, Trace
from datasets.otlp import ingestion
from scoring.freshness import score_is_stale
from scoring.models import Score
from tests.datasets.test_otlp_mapping import (
    ANSWER,
    MS,
    QUESTION,
    T0,
    genai_agent,
    openinference_agent,
    protobuf_body,
    sdk_spans,
)
from tests.factories import run_payload
from web.otlp import overload

PROTOBUF = "application/x-protobuf"
JSON = "application/json"


def _post(body, *, key, content_type=PROTOBUF, encoding=None, client=None):
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    if encoding:
        headers["Content-Encoding"] = encoding
    return (client or Client()).post("/v1/traces", data=body, content_type=content_type, headers=headers)


def _export(actors, spans, *, fmt="protobuf", key=None, hex_ids=True):
    """Export SDK spans the way an OTLP/HTTP exporter does; returns the response."""
    key = actors.acme_key if key is None else key
    if fmt == "protobuf":
        return _post(protobuf_body(spans), key=key)
    return _post(json_body(spans, hex_ids=hex_ids), key=key, content_type=JSON)


def json_body(spans, *, hex_ids=True):
    """The OTLP JSON of SDK spans: ids in hex as OTLP/JSON asks, or base64 as a protobuf printer writes them."""
    payload = json.loads(json_format.MessageToJson(encode_spans(spans)))
    if hex_ids:
        for resource_spans in payload.get("resourceSpans", []):
            for scope_spans in resource_spans.get("scopeSpans", []):
                for span in scope_spans.get("spans", []):
                    for key in ("traceId", "spanId", "parentSpanId"):
                        if span.get(key):
                            span[key] = _hex(span[key])
    return json.dumps(payload).encode()


def _hex(b64):
    return base64.b64decode(b64).hex()


def _answer(response):
    if response["Content-Type"] == PROTOBUF:
        return json_format.MessageToDict(ExportTraceServiceResponse.FromString(response.content))
    return response.json()


def _status(response):
    assert response["Content-Type"] in (PROTOBUF, JSON)
    if response["Content-Type"] == PROTOBUF:
        return json_format.MessageToDict(status_pb2.Status.FromString(response.content))
    return response.json()


def _trace_id(spans):
    return format(spans[0].context.trace_id, "032x")


def _run(actors, spans):
    return Trace.objects.get(project=actors.acme, trace_id=_trace_id(spans))


def run_view(trace):
    """What a reader sees of a run: its fields and its spans."""
    fields = ("trace_id", "name", "input", "output", "status", "error", "started_at", "ended_at", "latency_ms",
              "cost_cents", "metadata", "experiment_id", "case_id", "source")  # fmt: skip
    spans = sorted(
        (s.span_id, s.parent_span_id, s.kind, s.name, s.input, s.output, s.status, s.error, s.started_at, s.ended_at,
         s.latency_ms, s.cost_cents, s.model, s.usage, s.attributes)
        for s in Span.objects.filter(trace=trace)
    )  # fmt: skip
    return {f: getattr(trace, f) for f in fields}, spans


def test_it_stores_a_genai_agent_run_sent_as_protobuf_and_answers_in_protobuf(actors):
    spans = sdk_spans(genai_agent)
    response = _export(actors, spans)
    assert response.status_code == 200
    assert response["Content-Type"] == PROTOBUF
    assert response.content == b""  # an ExportTraceServiceResponse without partialSuccess
    run = _run(actors, spans)
    assert (run.source, run.name, run.status, run.error) == ("otlp", "reservo", "ok", None)
    assert (run.input, run.output) == (QUESTION, ANSWER)
    assert run.latency_ms == 1200
    # 280 input and 32 output tokens of gpt-4o-mini at 0.15 and 0.60 USD per million, in cents.
    assert run.cost_cents == Decimal("0.006120")
    assert run.cost_detail == {"estimated": True, "sources": ["genai-prices"], "price_table": "genai-prices 0.2.3"}
    assert run.usage == {"input_tokens": 280, "output_tokens": 32, "total_tokens": 312}
    assert run.models_used == ["gpt-4o-mini"]
    assert run.metadata["service.name"] == "reservo"
    stored = {s.name: s for s in run.spans.all()}
    assert sorted(s.kind for s in run.spans.all()) == ["agent", "llm", "llm", "tool"]
    assert stored["quote_room"].input == {"room": "Focus", "tier": "pro", "hours": 3}
    assert stored["quote_room"].output == {"total_cents": 7500}
    assert stored["quote_room"].parent_span_id == stored["reservo"].span_id


@pytest.mark.parametrize("hex_ids", [True, False], ids=["hex ids", "base64 ids"])
def test_it_stores_the_same_run_from_otlp_json_and_answers_in_json(actors, hex_ids):
    spans = sdk_spans(genai_agent)
    response = _export(actors, spans, fmt="json", hex_ids=hex_ids)
    assert response.status_code == 200
    assert response["Content-Type"] == JSON
    assert response.json() == {}
    json_view = run_view(_run(actors, spans))
    Trace.objects.all().delete()
    _export(actors, spans)
    assert run_view(_run(actors, spans)) == json_view


def test_it_stores_an_openinference_agent_run_with_its_cost(actors):
    spans = sdk_spans(openinference_agent)
    assert _export(actors, spans).status_code == 200
    run = _run(actors, spans)
    assert (run.name, run.input, run.output) == ("reservo", QUESTION, ANSWER)
    assert str(run.cost_cents) == "0.630000"  # 0.0042 + 0.0021 USD
    kinds = sorted(run.spans.values_list("kind", flat=True))
    assert kinds == ["agent", "llm", "llm", "retrieval", "tool"]


def test_it_takes_a_gzip_body(actors):
    spans = sdk_spans(genai_agent)
    response = _post(gzip.compress(protobuf_body(spans)), key=actors.acme_key, encoding="gzip")
    assert response.status_code == 200
    assert _run(actors, spans).spans.count() == 4


@pytest.mark.parametrize("content_type", [PROTOBUF, JSON])
def test_an_undecodable_body_is_a_400_status_in_the_request_content_type(actors, content_type):
    response = _post(b"\x0a\xff\xff garbage", key=actors.acme_key, content_type=content_type)
    assert response.status_code == 400
    assert response["Content-Type"] == content_type
    status = _status(response)
    assert status["code"] == code_pb2.INVALID_ARGUMENT
    assert "not" in status["message"]
    assert Trace.objects.count() == 0


def test_spans_it_cannot_use_are_counted_in_partial_success_and_the_rest_are_written(actors):
    spans = sdk_spans(genai_agent)
    payload = json.loads(json_body(spans))
    rows = payload["resourceSpans"][0]["scopeSpans"][0]["spans"]
    rows[0]["traceId"] = "0" * 32
    rows[1]["endTimeUnixNano"] = "0"
    response = _post(json.dumps(payload).encode(), key=actors.acme_key, content_type=JSON)
    assert response.status_code == 200
    partial = response.json()["partialSuccess"]
    assert partial["rejectedSpans"] == "2"
    assert "resourceSpans[0].scopeSpans[0].spans[0]: traceId is all zeros" in partial["errorMessage"]
    assert "resourceSpans[0].scopeSpans[0].spans[1]: span " in partial["errorMessage"]
    assert "has no endTimeUnixNano" in partial["errorMessage"]
    assert _run(actors, spans).spans.count() == 2


def test_the_partial_success_of_a_protobuf_request_is_protobuf(actors):
    spans = sdk_spans(genai_agent)
    message = encode_spans(spans)
    message.resource_spans[0].scope_spans[0].spans[0].span_id = b"\x00" * 8
    response = _post(message.SerializeToString(), key=actors.acme_key)
    answer = ExportTraceServiceResponse.FromString(response.content)
    assert answer.partial_success.rejected_spans == 1
    assert "spanId is all zeros" in answer.partial_success.error_message


@pytest.mark.parametrize("content_type", [PROTOBUF, JSON])
def test_without_a_valid_key_it_is_a_401_in_the_request_content_type(actors, content_type):
    for key in ("", "esk_nope_nope", "garbage"):
        response = _post(b"\x0a\x00", key=key, content_type=content_type)
        assert response.status_code == 401, key
        assert response["Content-Type"] == content_type
        assert response["WWW-Authenticate"].startswith("Bearer")
        assert _status(response)["code"] == code_pb2.UNAUTHENTICATED


def test_another_projects_key_writes_to_that_project_only(actors):
    spans = sdk_spans(genai_agent)
    _export(actors, spans)
    acme_before = run_view(_run(actors, spans))
    # The same trace id sent with another project's key is that project's own run.
    message = encode_spans(sdk_spans(lambda t: genai_agent(t, answer="umbrella's answer")))
    for span in message.resource_spans[0].scope_spans[0].spans:
        span.trace_id = spans[0].context.trace_id.to_bytes(16, "big")
    assert _post(message.SerializeToString(), key=actors.umbrella_key).status_code == 200
    assert run_view(_run(actors, spans)) == acme_before
    theirs = Trace.objects.get(project=actors.umbrella, trace_id=_trace_id(spans))
    assert theirs.output == "umbrella's answer"
    assert theirs.spans.count() == 4


def test_an_outsider_cannot_read_a_run_it_did_not_send(actors):
    spans = sdk_spans(genai_agent)
    _export(actors, spans)
    assert actors.outsider_api().get(f"/v1/api/traces/{_trace_id(spans)}").status_code == 404
    assert actors.api().get(f"/v1/api/traces/{_trace_id(spans)}").status_code == 200


def test_spans_split_over_exports_in_any_order_make_the_same_run(actors):
    spans = sdk_spans(genai_agent)
    _export(actors, spans)
    whole = run_view(_run(actors, spans))
    for order in ([3, 2, 1, 0], [1, 3], [0, 2]), ([2], [0], [3, 1]), ([0], [1], [2], [3]):
        Trace.objects.all().delete()
        for part in order:
            assert _export(actors, [spans[i] for i in part]).status_code == 200
        assert run_view(_run(actors, spans)) == whole, order


def test_a_run_is_provisional_until_its_root_arrives(actors):
    spans = sdk_spans(genai_agent)
    children = [s for s in spans if s.parent is not None]
    _export(actors, children)
    run = _run(actors, spans)
    assert run.name == "chat gpt-4o-mini"  # the earliest span whose parent has not arrived
    assert run.latency_ms == 1170  # from the earliest start to the latest end of what arrived
    _export(actors, [s for s in spans if s.parent is None])
    run.refresh_from_db()
    assert (run.name, run.input, run.output, run.latency_ms) == ("reservo", QUESTION, ANSWER, 1200)


def test_a_resent_export_writes_nothing_and_leaves_scores_fresh(actors):
    spans = sdk_spans(genai_agent)
    _export(actors, spans)
    run = _run(actors, spans)
    score = _score(actors, run)
    ids = set(run.spans.values_list("id", flat=True))
    assert _export(actors, spans).status_code == 200
    assert _export(actors, spans, fmt="json").status_code == 200
    assert set(run.spans.values_list("id", flat=True)) == ids
    run.refresh_from_db()
    assert run.revision == 1
    assert not score_is_stale(score, run)


def test_a_resent_span_with_other_content_replaces_the_stored_one(actors):
    spans = sdk_spans(genai_agent)
    _export(actors, spans)
    run = _run(actors, spans)
    score = _score(actors, run)
    payload = json.loads(json_body(spans))
    tool = next(
        s for s in payload["resourceSpans"][0]["scopeSpans"][0]["spans"] if s["name"] == "execute_tool quote_room"
    )
    tool["status"] = {"code": 2, "message": "room service down"}
    response = _post(json.dumps(payload).encode(), key=actors.acme_key, content_type=JSON)
    assert response.status_code == 200
    assert run.spans.count() == 4
    replaced = run.spans.get(name="quote_room")
    assert (replaced.status, replaced.error) == ("error", "room service down")
    run.refresh_from_db()
    assert run.status == "ok"  # a failed tool call does not fail the run; the root did not fail
    assert score_is_stale(score, run)


def test_a_late_span_marks_the_runs_scores_stale_and_updates_the_run(actors):
    spans = sdk_spans(openinference_agent)
    late = next(s for s in spans if s.attributes.get("llm.cost.total") == 0.0021)
    _export(actors, [s for s in spans if s is not late])
    run = _run(actors, spans)
    assert str(run.cost_cents) == "0.420000"
    other_spans = sdk_spans(openinference_agent)
    _export(actors, other_spans)
    score, other_score = _score(actors, run), _score(actors, _run(actors, other_spans))
    _export(actors, [late])
    run.refresh_from_db()
    assert str(run.cost_cents) == "0.630000"
    other_run = _run(actors, other_spans)
    assert (score_is_stale(score, run), score_is_stale(other_score, other_run)) == (True, False)


def test_the_run_fails_when_its_root_fails(actors):
    def failing(tracer):
        with tracer.start_as_current_span(
            "invoke_agent reservo", attributes={"gen_ai.operation.name": "invoke_agent"}
        ) as root:
            with tracer.start_as_current_span("execute_tool quote_room", attributes={"gen_ai.tool.name": "quote_room"}):
                pass
            root.record_exception(TimeoutError("the model did not answer"))
            root.set_status(Status(StatusCode.ERROR))

    spans = sdk_spans(failing)
    _export(actors, spans)
    run = _run(actors, spans)
    assert (run.status, run.error) == ("error", "TimeoutError: the model did not answer")


def test_each_new_run_counts_against_the_quota_and_spans_of_known_runs_do_not(actors):
    actors.acme.quota_per_minute = 1
    actors.acme.save()
    first, second = sdk_spans(genai_agent), sdk_spans(genai_agent)
    assert _export(actors, first[:2]).status_code == 200
    assert _export(actors, first[2:]).status_code == 200  # the same run: no quota
    response = _export(actors, second, fmt="json")
    assert response.status_code == 429
    assert response["Content-Type"] == JSON
    assert int(response["Retry-After"]) >= 1
    assert _status(response)["code"] == code_pb2.RESOURCE_EXHAUSTED
    assert not Trace.objects.filter(trace_id=_trace_id(second)).exists()
    assert _run(actors, first).spans.count() == 4


def test_an_export_over_quota_writes_nothing_at_all(actors):
    actors.acme.quota_per_minute = 1
    actors.acme.save()
    known = sdk_spans(genai_agent)
    _export(actors, known[:1])
    response = _export(actors, known[1:] + sdk_spans(genai_agent))
    assert response.status_code == 429
    assert response["Content-Type"] == PROTOBUF
    assert status_pb2.Status.FromString(response.content).code == code_pb2.RESOURCE_EXHAUSTED
    # The span sent first, and the tool call that model call asked for (derived until its tool span comes).
    assert Trace.objects.count() == 1 and sorted(Span.objects.values_list("kind", flat=True)) == ["llm", "tool"]


def test_too_many_exports_at_once_is_a_503_with_retry_after(actors, settings):
    settings.EVALSITE_OTLP_MAX_CONCURRENT = 1
    with overload.export_slot():  # another export is being taken
        response = _export(actors, sdk_spans(genai_agent))
    assert response.status_code == 503
    assert response["Retry-After"] == "1"
    assert status_pb2.Status.FromString(response.content).code == code_pb2.UNAVAILABLE
    assert Trace.objects.count() == 0
    assert _export(actors, sdk_spans(genai_agent)).status_code == 200  # the slot is free again


def test_a_database_that_cannot_take_the_write_is_a_503(actors, monkeypatch):
    def locked(*args):
        raise OperationalError("database is locked")

    monkeypatch.setattr(ingestion, "_merge", locked)
    response = _export(actors, sdk_spans(genai_agent), fmt="json")
    assert response.status_code == 503
    assert response["Retry-After"] == "1"
    assert "retry" in response.json()["message"]


def test_a_body_that_decompresses_past_the_limit_is_a_413(actors, settings):
    settings.EVALSITE_MAX_BODY_BYTES = 100_000
    response = _post(gzip.compress(b"\x00" * 1_000_000), key=actors.acme_key, encoding="gzip")
    assert response.status_code == 413
    assert response["Content-Type"] == PROTOBUF
    assert "once decompressed" in status_pb2.Status.FromString(response.content).message


def test_a_body_over_the_limit_by_its_content_length_is_a_413_before_anything_is_read(actors, settings):
    settings.EVALSITE_MAX_BODY_BYTES = 2048
    response = _post(b"\x0a" * 4096, key=actors.acme_key)
    assert response.status_code == 413
    # In the exporter's format, as every other OTLP answer.
    assert response["Content-Type"] == PROTOBUF
    status = status_pb2.Status.FromString(response.content)
    assert (status.code, status.message) == (
        code_pb2.RESOURCE_EXHAUSTED,
        "The body is 4096 bytes; the limit is 2048 bytes (EVALSITE_MAX_BODY_BYTES).",
    )
    assert Trace.objects.count() == 0


def test_an_export_without_spans_is_a_plain_success(actors):
    for body, content_type in ((b"", PROTOBUF), (b"{}", JSON), (b'{"resourceSpans": [{"scopeSpans": []}]}', JSON)):
        response = _post(body or b"\x0a\x00", key=actors.acme_key, content_type=content_type)
        assert response.status_code == 200
        assert _answer(response) == {}
    assert Trace.objects.count() == 0


def test_other_content_types_and_encodings_are_a_415(actors):
    response = _post(b"{}", key=actors.acme_key, content_type="text/plain")
    assert response.status_code == 415
    assert response["Content-Type"] == JSON
    assert "application/x-protobuf" in response.json()["message"]
    response = _post(b"{}", key=actors.acme_key, content_type=JSON, encoding="br")
    assert response.status_code == 415


def test_it_only_takes_post(actors):
    response = Client().get("/v1/traces", headers={"Authorization": f"Bearer {actors.acme_key}"})
    assert response.status_code == 405
    assert response.json()["code"] == code_pb2.UNIMPLEMENTED


def test_it_needs_no_csrf_token(actors):
    client = Client(enforce_csrf_checks=True)
    assert _post(protobuf_body(sdk_spans(genai_agent)), key=actors.acme_key, client=client).status_code == 200


def test_resource_attributes_link_the_run_to_an_experiment_and_a_case(actors):
    dataset = Dataset.objects.create(project=actors.acme, name="reservo")
    case = GoldenCase.objects.create(dataset=dataset, name="quote_focus_pro_3h", input=QUESTION)
    resource = {"service.name": "reservo", "evalsite.experiment": "v2", "evalsite.dataset": "reservo",
                "evalsite.case": "quote_focus_pro_3h"}  # fmt: skip
    spans = sdk_spans(genai_agent, resource=resource)
    response = _export(actors, spans)
    assert response.content == b""  # no warning
    run = _run(actors, spans)
    assert (run.experiment.name, run.experiment.dataset, run.case) == ("v2", dataset, case)


def test_a_span_attribute_links_by_case_id(actors):
    dataset = Dataset.objects.create(project=actors.acme, name="reservo")
    case = GoldenCase.objects.create(dataset=dataset, name="quote_focus_pro_3h")

    def tagged(tracer):
        with tracer.start_as_current_span("run", attributes={"evalsite.case": case.pk, "evalsite.experiment": "v3"}):
            pass

    spans = sdk_spans(tagged)
    _export(actors, spans)
    run = _run(actors, spans)
    assert (run.case, run.experiment.name) == (case, "v3")


def test_an_unknown_case_leaves_the_run_unlinked_with_a_warning_until_the_case_exists(actors):
    dataset = Dataset.objects.create(project=actors.acme, name="reservo")
    resource = {"evalsite.experiment": "v2", "evalsite.dataset": "reservo", "evalsite.case": "not_yet"}
    spans = sdk_spans(genai_agent, resource=resource)
    response = _export(actors, spans[:2], fmt="json")
    assert response.status_code == 200
    partial = response.json()["partialSuccess"]
    assert "rejectedSpans" not in partial  # nothing rejected: a warning only
    assert f"run {_trace_id(spans)}: no case named 'not_yet' in dataset 'reservo'" in partial["errorMessage"]
    run = _run(actors, spans)
    assert (run.experiment.name, run.case) == ("v2", None)
    assert run.spans.count() == 2
    case = GoldenCase.objects.create(dataset=dataset, name="not_yet")
    assert _export(actors, spans[2:]).content == b""
    run.refresh_from_db()
    assert run.case == case


def test_an_unknown_dataset_or_a_case_of_another_project_is_a_warning(actors):
    theirs = GoldenCase.objects.create(dataset=Dataset.objects.create(project=actors.umbrella, name="theirs"), name="c")
    spans = sdk_spans(genai_agent, resource={"evalsite.dataset": "nope", "evalsite.case": theirs.pk})
    message = _answer(_export(actors, spans))["partialSuccess"]["errorMessage"]
    assert "no dataset named 'nope' in this project" in message
    assert f"no case {theirs.pk} in this project" in message
    assert _run(actors, spans).case is None


def test_spans_of_a_run_sent_to_the_runs_api_are_rejected(actors):
    spans = sdk_spans(genai_agent)
    actors.api().post("/v1/api/traces", run_payload(_trace_id(spans)), format="json")
    answer = _answer(_export(actors, spans))
    assert answer["partialSuccess"]["rejectedSpans"] == "4"
    assert "was sent to /v1/api/traces" in answer["partialSuccess"]["errorMessage"]
    assert Trace.objects.get(trace_id=_trace_id(spans)).spans.count() == 2


def test_a_run_takes_at_most_the_span_limit(actors, monkeypatch):
    monkeypatch.setattr(ingestion, "MAX_SPANS_PER_RUN", 3)
    spans = sdk_spans(genai_agent)
    _export(actors, spans[:2])
    answer = _answer(_export(actors, spans))
    assert answer["partialSuccess"]["rejectedSpans"] == "1"
    assert "already has 3 spans" in answer["partialSuccess"]["errorMessage"]
    assert _run(actors, spans).spans.count() == 3


def test_one_export_carries_spans_of_at_most_max_batch_runs(actors, settings):
    settings.EVALSITE_MAX_BATCH = 2
    runs = [sdk_spans(genai_agent) for _ in range(3)]
    answer = _answer(_export(actors, [s for spans in runs for s in spans]))
    assert answer["partialSuccess"]["rejectedSpans"] == "4"
    assert "the most one export may carry" in answer["partialSuccess"]["errorMessage"]
    assert Trace.objects.count() == 2


def test_the_earliest_parentless_span_is_the_root(actors):
    spans = sdk_spans(genai_agent)
    message = encode_spans(spans)
    chat = next(s for s in message.resource_spans[0].scope_spans[0].spans if s.name == "chat gpt-4o-mini")
    chat.parent_span_id = b""
    chat.start_time_unix_nano = T0 - 5 * MS
    _post(message.SerializeToString(), key=actors.acme_key)
    run = _run(actors, spans)
    assert run.name == "chat gpt-4o-mini"
    assert run.started_at.timestamp() * 1000 == (T0 - 5 * MS) // MS


def _score(actors, run):
    return Score.objects.create(
        project=actors.acme, trace=run, scorer="answered", config_hash="0" * 64, value=1.0, passed=True
    )


def test_experiments_named_by_exports_are_created_once(actors):
    for _ in range(2):
        _export(actors, sdk_spans(genai_agent, resource={"evalsite.experiment": "v9"}))
    assert Experiment.objects.filter(project=actors.acme, name="v9").count() == 1
    assert Trace.objects.filter(experiment__name="v9").count() == 2


def test_an_attribute_key_sent_twice_in_protobuf_is_a_400_naming_it_and_nothing_is_written(actors):
    message = encode_spans(sdk_spans(genai_agent))
    span = message.resource_spans[0].scope_spans[0].spans[0]
    again = span.attributes.add()
    again.key = span.attributes[0].key
    again.value.string_value = "the second value"
    response = _post(message.SerializeToString(), key=actors.acme_key)
    assert response.status_code == 400
    status = _status(response)
    assert f"holds the key '{span.attributes[0].key}' twice" in status["message"]
    assert "resource_spans[0].scope_spans[0].spans[0].attributes" in status["message"]
    assert not Trace.objects.exists()
