"""A run that failed a check does not become the reference of its own failure without being asked."""

import pytest

from datasets.models import Dataset, GoldenCase
from tests.factories import trace_create


@pytest.fixture
def scored(actors):
    Dataset.objects.create(project=actors.acme, name="desk")
    trace_create(actors.acme, "good", output="75 EUR")
    trace_create(actors.acme, "bad", output="")
    body = {"scorers": ["answered", "no_errors"], "trace_ids": ["good", "bad"]}
    assert actors.api().post("/v1/api/score", body, format="json").status_code == 200
    return actors.api()


def _capture(api, **body):
    return api.post("/v1/api/datasets/desk/cases/from-traces", body, format="json")


def test_a_failed_runs_answer_is_refused_as_the_expected_answer_naming_the_failed_checks(scored):
    response = _capture(scored, trace_ids=["bad"], use_output_as_expected=True)
    assert response.status_code == 409
    assert response.json()["errors"] == [{"field": "trace_ids[0]", "message": "failed answered"}]
    assert not GoldenCase.objects.exists()


def test_asking_explicitly_takes_it_anyway(scored):
    response = _capture(scored, trace_ids=["bad"], use_output_as_expected=True, accept_failed_output=True)
    assert response.status_code == 201
    assert GoldenCase.objects.get().expected_output == ""


def test_without_taking_the_answer_a_failed_run_is_captured_as_usual(scored):
    assert _capture(scored, trace_ids=["bad"]).status_code == 201


def test_a_bulk_capture_skips_the_failing_runs_and_says_which(scored):
    body = _capture(scored, trace_ids=["good", "bad"], use_output_as_expected=True).json()
    assert (body["created"], body["skipped"]) == (1, [{"trace_id": "bad", "failed_checks": ["answered"]}])
    assert list(GoldenCase.objects.values_list("source_trace_id", flat=True)) == ["good"]


@pytest.fixture
def unscored(actors):
    Dataset.objects.create(project=actors.acme, name="desk")
    trace_create(actors.acme, "errored", output="75 EUR", status="error", error="booking API timed out")
    trace_create(actors.acme, "refused", output="I'm sorry, but I can't help with that request.")
    trace_create(actors.acme, "dollars", output="75 USD")
    trace_create(actors.acme, "euros", output="75 EUR")
    return actors.api()


def test_it_refuses_a_run_with_status_error_as_a_reference_with_no_score_stored(unscored):
    response = _capture(unscored, trace_ids=["errored"], use_output_as_expected=True)
    assert response.status_code == 409
    assert response.json()["errors"] == [{"field": "trace_ids[0]", "message": "failed status error"}]
    assert not GoldenCase.objects.exists()


def test_it_refuses_a_refusal_as_a_reference(unscored):
    response = _capture(unscored, trace_ids=["refused"], use_output_as_expected=True)
    assert response.status_code == 409
    assert response.json()["errors"] == [{"field": "trace_ids[0]", "message": "failed not_a_refusal"}]


def test_it_runs_the_new_cases_own_checks_on_the_run_before_taking_its_answer(unscored):
    body = {"use_output_as_expected": True, "expectations": {"contains": "EUR"}}
    response = _capture(unscored, trace_ids=["dollars"], **body)
    assert response.status_code == 409
    assert response.json()["errors"] == [{"field": "trace_ids[0]", "message": "failed contains"}]
    assert _capture(unscored, trace_ids=["euros"], **body).status_code == 201
    assert GoldenCase.objects.get().expected_output == "75 EUR"
