from decimal import Decimal

from datasets.models import Dataset, Experiment, GoldenCase, Span, Trace
from tests.factories import run_payload


def _post(actors, body, key=None):
    return actors.api(key).post("/v1/api/traces", body, format="json")


def test_it_stores_one_run_with_its_spans(actors):
    response = _post(actors, run_payload("run-42", experiment="v2"))
    assert response.status_code == 201
    assert response.json() == {"created": 1, "unchanged": 0, "traces": [{"trace_id": "run-42", "status": "created"}]}
    trace = Trace.objects.get(project=actors.acme, trace_id="run-42")
    assert trace.output == "Focus pro 3h cuesta 75,00 €."
    assert trace.latency_ms == 1200
    assert trace.cost_cents == Decimal("0.84")
    assert trace.experiment.name == "v2"
    spans = {s.span_id: s for s in trace.spans.all()}
    assert spans["s2"].parent_span_id == "s1"
    assert spans["s2"].kind == "tool" and spans["s2"].name == "quote_room"
    assert spans["s2"].input == {"room": "Focus", "tier": "pro", "hours": 3}
    assert spans["s2"].output == {"total_cents": 7500}


def test_it_stores_a_batch_of_runs(actors):
    batch = {"traces": [run_payload(f"b-{i}") for i in range(25)]}
    response = _post(actors, batch)
    assert response.status_code == 201
    assert response.json()["created"] == 25
    assert Trace.objects.filter(project=actors.acme).count() == 25
    assert Span.objects.filter(trace__project=actors.acme).count() == 50


def test_it_rejects_a_batch_with_one_bad_run_and_writes_nothing(actors):
    batch = {"traces": [run_payload("good-1"), run_payload("bad", status="fine"), run_payload("good-2")]}
    response = _post(actors, batch)
    assert response.status_code == 400
    assert response.json()["errors"] == [{"field": "traces[1].status", "message": "must be one of ok, error"}]
    assert Trace.objects.count() == 0
    assert Span.objects.count() == 0


def test_it_names_every_bad_item_by_index_and_field(actors):
    bad_span = {"span_id": "s1", "kind": "robot", "latency_ms": -5}
    batch = {
        "traces": [
            run_payload("ok-1"),
            {"trace_id": "", "ouput": "typo"},
            run_payload("bad-span", spans=[bad_span]),
            run_payload("bad-time", started_at="yesterday", ended_at="2026-11-30T09:00:00"),
        ]
    }
    errors = _post(actors, batch).json()["errors"]
    assert {"field": "traces[1].trace_id", "message": "must not be empty"} in errors
    assert {"field": "traces[1].ouput", "message": "is not a known field"} in errors
    assert {
        "field": "traces[2].spans[0].kind",
        "message": "must be one of llm, tool, retrieval, agent, other",
    } in errors
    assert {"field": "traces[2].spans[0].latency_ms", "message": "must be at least 0"} in errors
    assert {"field": "traces[3].started_at", "message": "is not an RFC 3339 timestamp: 'yesterday'"} in errors
    assert {
        "field": "traces[3].ended_at",
        "message": "has no timezone: '2026-11-30T09:00:00' (add Z or an offset)",
    } in errors
    assert len(errors) == 6


def test_it_refuses_spans_that_repeat_an_id_or_name_a_missing_parent(actors):
    spans = [
        {"span_id": "a"},
        {"span_id": "a"},
        {"span_id": "b", "parent_id": "nowhere"},
        {"span_id": "c", "parent_id": "c"},
    ]
    errors = _post(actors, run_payload("r", spans=spans)).json()["errors"]
    assert errors == [
        {"field": "spans[1].span_id", "message": "repeats span_id 'a'"},
        {"field": "spans[2].parent_id", "message": "names span 'nowhere', which is not in this run"},
        {"field": "spans[3].parent_id", "message": "names the span itself"},
    ]


def test_it_refuses_a_run_that_ends_before_it_starts(actors):
    errors = _post(actors, run_payload("r", ended_at="2026-11-30T09:59:59Z")).json()["errors"]
    assert errors == [{"field": "ended_at", "message": "is before started_at"}]


def test_it_refuses_a_body_that_is_not_a_run(actors):
    for body in ([run_payload("r")], {"traces": []}, {"traces": "many"}, {"traces": [run_payload("r")], "extra": 1}):
        response = _post(actors, body)
        assert response.status_code == 400, body
        assert Trace.objects.count() == 0


def test_a_retry_with_identical_content_is_a_success_that_writes_nothing(actors):
    payload = run_payload("run-7")
    assert _post(actors, payload).status_code == 201
    response = _post(actors, payload)
    assert response.status_code == 200
    assert response.json()["traces"] == [{"trace_id": "run-7", "status": "unchanged"}]
    assert Trace.objects.count() == 1
    assert Span.objects.count() == 2


def test_key_order_does_not_change_identity(actors):
    payload = run_payload("run-8")
    _post(actors, payload)
    reordered = dict(reversed(list(payload.items())))
    assert _post(actors, reordered).status_code == 200


def test_different_content_under_an_existing_trace_id_is_a_409_and_nothing_is_written(actors):
    _post(actors, run_payload("run-9"))
    batch = {"traces": [run_payload("new-1"), run_payload("run-9", output="another answer")]}
    response = _post(actors, batch)
    assert response.status_code == 409
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["errors"] == [
        {"field": "traces[1].trace_id", "message": "trace_id 'run-9' is already stored with different content"}
    ]
    assert not Trace.objects.filter(trace_id="new-1").exists()
    assert Trace.objects.get(trace_id="run-9").output == "Focus pro 3h cuesta 75,00 €."


def test_a_batch_repeating_a_run_identically_stores_it_once(actors):
    response = _post(actors, {"traces": [run_payload("twin"), run_payload("twin")]})
    assert response.status_code == 201
    assert Trace.objects.filter(trace_id="twin").count() == 1


def test_a_batch_repeating_a_trace_id_with_other_content_is_refused(actors):
    response = _post(actors, {"traces": [run_payload("twin"), run_payload("twin", output="other")]})
    assert response.status_code == 400
    assert response.json()["errors"] == [
        {"field": "traces[1].trace_id", "message": "repeats trace_id 'twin' of item 0 with different content"}
    ]


def test_trace_ids_are_per_project(actors):
    assert _post(actors, run_payload("shared-id")).status_code == 201
    response = _post(actors, run_payload("shared-id", output="umbrella's own"), key=actors.umbrella_key)
    assert response.status_code == 201
    assert Trace.objects.filter(trace_id="shared-id").count() == 2


def test_an_experiment_is_created_on_first_use_and_reused_after(actors):
    _post(actors, {"traces": [run_payload("e-1", experiment="v7"), run_payload("e-2", experiment="v7")]})
    _post(actors, run_payload("e-3", experiment="v7"))
    experiment = Experiment.objects.get(project=actors.acme, name="v7")
    assert experiment.traces.count() == 3


def test_a_refused_request_does_not_create_its_experiment(actors):
    _post(actors, {"traces": [run_payload("e-1", experiment="ghost"), run_payload("bad", status="?")]})
    assert not Experiment.objects.filter(name="ghost").exists()


def test_it_links_a_run_to_a_golden_case_by_id_or_by_name(actors):
    dataset = Dataset.objects.create(project=actors.acme, name="reservo")
    case = GoldenCase.objects.create(dataset=dataset, name="quote_focus_pro_3h", input="q")
    _post(actors, run_payload("by-name", dataset="reservo", case="quote_focus_pro_3h", experiment="v1"))
    _post(actors, run_payload("by-id", case=case.pk))
    _post(actors, run_payload("via-experiment", experiment="v1", case="quote_focus_pro_3h"))
    assert set(case.runs.values_list("trace_id", flat=True)) == {"by-name", "by-id", "via-experiment"}
    assert Experiment.objects.get(name="v1").dataset == dataset


def test_it_names_an_unknown_case_or_dataset(actors):
    dataset = Dataset.objects.create(project=actors.umbrella, name="theirs")
    theirs = GoldenCase.objects.create(dataset=dataset, name="secret_case")
    Dataset.objects.create(project=actors.acme, name="reservo")
    batch = {
        "traces": [
            run_payload("a", dataset="nope", case="x"),
            run_payload("b", dataset="reservo", case="missing"),
            run_payload("c", case=theirs.pk),
            run_payload("d", case="loose-name"),
        ]
    }
    response = _post(actors, batch)
    assert response.status_code == 400
    assert response.json()["errors"] == [
        {"field": "traces[0].dataset", "message": "no dataset named 'nope' in this project"},
        {
            "field": "traces[3].case",
            "message": "names a case by name; give 'dataset' too (or use an experiment that has one)",
        },
        {"field": "traces[2].case", "message": f"no case {theirs.pk} in this project"},
        {"field": "traces[1].case", "message": "no case named 'missing' in that dataset"},
    ]
    assert Trace.objects.count() == 0


def test_latency_and_cost_are_derived_when_omitted(actors):
    payload = run_payload("derived", ended_at="2026-11-30T10:00:02.5Z")
    del payload["latency_ms"], payload["cost_cents"]
    payload["spans"][0]["cost_cents"] = 0.5
    payload["spans"][1]["cost_cents"] = 0.25
    _post(actors, payload)
    trace = Trace.objects.get(trace_id="derived")
    assert trace.latency_ms == 2500
    assert trace.cost_cents == Decimal("0.75")


def test_a_cost_summed_from_the_spans_beyond_what_a_cost_can_hold_is_a_400_naming_the_field(actors):
    payload = run_payload("summed-over")
    del payload["cost_cents"]
    payload["spans"][0]["cost_cents"] = 99_999_999
    payload["spans"][1]["cost_cents"] = 99_999_999
    response = _post(actors, payload)
    assert response.status_code == 400
    assert [e["field"] for e in response.json()["errors"]] == ["cost_cents"]
    assert not Trace.objects.filter(trace_id="summed-over").exists()


def test_a_latency_computed_from_the_times_beyond_the_maximum_is_a_400_naming_the_field(actors):
    ages = {"started_at": "0001-01-01T00:00:00Z", "ended_at": "9999-12-31T00:00:00Z"}
    run = run_payload("long-run", **ages)
    del run["latency_ms"]
    span = run_payload("long-span")
    span["spans"][0].update(ages, latency_ms=None)
    for payload, field in ((run, "latency_ms"), (span, "spans[0].latency_ms")):
        response = _post(actors, payload)
        assert response.status_code == 400
        assert [e["field"] for e in response.json()["errors"]] == [field]
    assert not Trace.objects.filter(trace_id__in=["long-run", "long-span"]).exists()


def test_a_run_without_a_start_time_takes_its_first_span_or_now(actors):
    payload = run_payload("no-start")
    del payload["started_at"]
    payload["spans"][1]["started_at"] = "2026-11-29T08:00:00Z"
    _post(actors, payload)
    assert Trace.objects.get(trace_id="no-start").started_at.isoformat() == "2026-11-29T08:00:00+00:00"


def test_a_run_carries_its_session_user_and_conversation_and_the_list_filters_on_them(actors):
    linked = run_payload("chat-1", session_id="s-9", user_id="u-ana", conversation_id="c-1")
    assert _post(actors, {"traces": [linked, run_payload("chat-2", session_id="s-10")]}).status_code == 201
    trace = Trace.objects.get(project=actors.acme, trace_id="chat-1")
    assert (trace.session_id, trace.user_id, trace.conversation_id) == ("s-9", "u-ana", "c-1")
    for query, expected in (("session=s-9", ["chat-1"]), ("user=u-ana", ["chat-1"]), ("session=s-10", ["chat-2"])):
        listed = actors.api().get(f"/v1/api/traces?{query}").json()["results"]
        assert [r["trace_id"] for r in listed] == expected, query
    detail = actors.api().get("/v1/api/traces/chat-1").json()
    assert detail["conversation_id"] == "c-1"


def test_a_session_id_that_is_not_a_short_string_is_a_400_naming_it(actors):
    response = _post(actors, {"traces": [run_payload("ok-1"), run_payload("long", session_id="s" * 201)]})
    assert response.status_code == 400
    assert [e["field"] for e in response.json()["errors"]] == ["traces[1].session_id"]
    response = _post(actors, run_payload("number", user_id=7))
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "user_id"
    assert not Trace.objects.filter(project=actors.acme).exists()
