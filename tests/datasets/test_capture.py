"""Capturing runs into a dataset: POST /v1/api/datasets/{name}/cases/from-traces."""

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection

from datasets.capture import cases_capture
from datasets.models import CaseRevision, Dataset, GoldenCase, Trace
from tests.base import actors_create
from tests.factories import trace_create

URL = "/v1/api/datasets/reservo/cases/from-traces"


@pytest.fixture
def api(actors):
    client = actors.api()
    assert client.post("/v1/api/datasets", {"name": "reservo"}, format="json").status_code == 201
    trace_create(actors.acme, "failed-run", input="¿Focus pro 3h?", output="Reservé la sala (BK-0001).")
    trace_create(actors.acme, "good-run", input="¿Focus basic 3h?", output="45,00 EUR")
    return client


def _errors(response):
    return {e["field"]: e["message"] for e in response.json()["errors"]}


def test_by_default_the_runs_answer_is_not_the_expected_answer(api):
    response = api.post(URL, {"trace_ids": ["failed-run"]}, format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["created"], body["existing"]) == (1, 0)
    case = body["cases"][0]["case"]
    assert case["input"] == "¿Focus pro 3h?"
    assert case["expected_output"] is None
    assert case["needs_expected_output"] is True
    assert case["source_trace_id"] == "failed-run"
    assert case["name"] == "failed-run"


def test_use_output_as_expected_false_is_the_same_as_leaving_it_out(api):
    body = api.post(URL, {"trace_ids": ["failed-run"], "use_output_as_expected": False}, format="json").json()
    assert body["cases"][0]["case"]["expected_output"] is None


def test_use_output_as_expected_true_takes_the_runs_answer(api):
    body = api.post(URL, {"trace_ids": ["good-run"], "use_output_as_expected": True}, format="json").json()
    case = body["cases"][0]["case"]
    assert case["expected_output"] == "45,00 EUR"
    assert case["needs_expected_output"] is False


def test_capturing_the_same_run_twice_does_not_create_a_twin(api):
    first = api.post(URL, {"trace_ids": ["failed-run"]}, format="json").json()
    again = api.post(URL, {"trace_ids": ["failed-run", "failed-run"], "expected_output": "other"}, format="json")
    assert again.status_code == 200
    body = again.json()
    assert (body["created"], body["existing"]) == (0, 1)
    assert body["cases"][0]["status"] == "existing"
    assert body["cases"][0]["case"]["id"] == first["cases"][0]["case"]["id"]
    assert body["cases"][0]["case"]["expected_output"] is None
    assert GoldenCase.objects.count() == 1
    assert CaseRevision.objects.count() == 1


def test_the_same_run_may_be_captured_into_two_datasets(api):
    api.post("/v1/api/datasets", {"name": "smoke"}, format="json")
    api.post(URL, {"trace_ids": ["failed-run"]}, format="json")
    response = api.post("/v1/api/datasets/smoke/cases/from-traces", {"trace_ids": ["failed-run"]}, format="json")
    assert response.status_code == 201
    assert GoldenCase.objects.filter(source_trace_id="failed-run").count() == 2


def test_several_runs_in_one_request_give_one_case_each(api):
    body = api.post(URL, {"trace_ids": ["failed-run", "good-run"]}, format="json").json()
    assert [c["trace_id"] for c in body["cases"]] == ["failed-run", "good-run"]
    assert body["created"] == 2


def test_a_request_may_give_the_expected_answer_expectations_and_name(api):
    body = api.post(
        URL,
        {
            "trace_ids": ["failed-run"],
            "name": "quote_focus_pro_3h",
            "expected_output": "75,00 EUR",
            "expectations": {"expected_tools": ["quote_room"]},
        },
        format="json",
    ).json()
    case = body["cases"][0]["case"]
    assert case["name"] == "quote_focus_pro_3h"
    assert case["expected_output"] == "75,00 EUR"
    assert case["expectations"] == {"expected_tools": ["quote_room"]}


def test_the_source_trace_id_is_kept_when_the_run_is_deleted(api, actors):
    case_id = api.post(URL, {"trace_ids": ["failed-run"]}, format="json").json()["cases"][0]["case"]["id"]
    Trace.objects.filter(trace_id="failed-run").delete()
    case = api.get(f"/v1/api/cases/{case_id}").json()
    assert case["source_trace_id"] == "failed-run"
    assert case["source_run_available"] is False
    assert GoldenCase.objects.get(pk=case_id).source_run_id is None


def test_generated_names_do_not_collide(api):
    api.post("/v1/api/datasets/reservo/cases", {"name": "failed-run"}, format="json")
    api.post("/v1/api/datasets/reservo/cases", {"name": "failed-run-2"}, format="json")
    body = api.post(URL, {"trace_ids": ["failed-run"]}, format="json").json()
    assert body["cases"][0]["case"]["name"] == "failed-run-3"


def test_a_name_asked_for_that_is_taken_is_a_409(api):
    api.post("/v1/api/datasets/reservo/cases", {"name": "taken"}, format="json")
    response = api.post(URL, {"trace_ids": ["failed-run"], "name": "taken"}, format="json")
    assert response.status_code == 409
    assert "name" in _errors(response)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "trace_ids"),
        ({"trace_ids": []}, "trace_ids"),
        ({"trace_ids": "failed-run"}, "trace_ids"),
        ({"trace_ids": ["failed-run", 7]}, "trace_ids[1]"),
        ({"trace_ids": ["failed-run"], "use_output_as_expected": "yes"}, "use_output_as_expected"),
        ({"trace_ids": ["failed-run"], "use_output_as_expected": True, "expected_output": "x"}, "expected_output"),
        ({"trace_ids": ["failed-run", "good-run"], "name": "both"}, "name"),
        ({"trace_ids": ["failed-run"], "expectations": {"expected_tool": ["x"]}}, "expectations.expected_tool"),
        ({"trace_ids": ["failed-run"], "use_output": True}, "use_output"),
    ],
)
def test_it_names_each_bad_field_and_captures_nothing(api, body, field):
    response = api.post(URL, body, format="json")
    assert response.status_code == 400
    assert field in _errors(response)
    assert not GoldenCase.objects.exists()


def test_an_unknown_run_is_a_400_naming_it_and_nothing_is_captured(api):
    response = api.post(URL, {"trace_ids": ["failed-run", "never-sent"]}, format="json")
    assert response.status_code == 400
    assert _errors(response) == {"trace_ids[1]": "no run with trace_id 'never-sent' in this project"}
    assert not GoldenCase.objects.exists()


def test_another_projects_run_cannot_be_captured(api, actors):
    trace_create(actors.umbrella, "their-run")
    response = api.post(URL, {"trace_ids": ["their-run"]}, format="json")
    assert response.status_code == 400
    assert "trace_ids[0]" in _errors(response)


def test_an_outsider_gets_404_for_the_dataset(api, actors):
    trace_create(actors.umbrella, "failed-run")
    response = actors.outsider_api().post(URL, {"trace_ids": ["failed-run"]}, format="json")
    assert response.status_code == 404
    assert not GoldenCase.objects.exists()


def test_the_capture_is_recorded_as_the_cases_first_revision(api, actors):
    case_id = api.post(URL, {"trace_ids": ["failed-run"]}, format="json").json()["cases"][0]["case"]["id"]
    revision = CaseRevision.objects.get(case_id=case_id)
    assert revision.action == "created"
    assert revision.changed_by_key.project == actors.acme
    assert revision.new["source_trace_id"] == "failed-run"


@pytest.mark.django_db(transaction=True)
def test_concurrent_captures_of_one_run_make_one_case():
    actors = actors_create()
    dataset = Dataset.objects.create(project=actors.acme, name="reservo")
    trace_create(actors.acme, "raced-run")
    barrier = threading.Barrier(4)

    def capture():
        barrier.wait()
        try:
            [captured] = cases_capture(dataset=dataset, data={"trace_ids": ["raced-run"]}, by=actors.bob)
            return captured.case.pk, captured.created
        finally:
            connection.close()

    with ThreadPoolExecutor(4) as pool:
        results = [f.result() for f in [pool.submit(capture) for _ in range(4)]]
    assert GoldenCase.objects.count() == 1
    assert {pk for pk, _ in results} == {GoldenCase.objects.get().pk}
    assert sum(created for _, created in results) == 1
    assert CaseRevision.objects.count() == 1


def test_a_trace_id_with_a_nul_is_named(api):
    response = api.post(URL, {"trace_ids": ["failed\u0000run"]}, format="json")
    assert response.status_code == 400
    assert "trace_ids[0]" in _errors(response)


@pytest.mark.parametrize("item", [{"trace_id": "r1"}, ["r1"], 7, None])
def test_a_trace_ids_item_that_is_not_a_string_is_a_400_naming_it(actors, item):
    Dataset.objects.get_or_create(project=actors.acme, name="gold")
    response = actors.api().post("/v1/api/datasets/gold/cases/from-traces", {"trace_ids": ["r0", item]}, format="json")
    assert response.status_code == 400, response.content
    assert {"field": "trace_ids[1]", "message": "must be a trace_id (a non-empty string)"} in response.json()["errors"]
