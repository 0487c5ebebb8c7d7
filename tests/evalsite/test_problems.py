"""Every error leaves the API as RFC 9457 problem+json."""

import pytest
from django.test import override_settings

from tests.factories import run_payload

PROBLEM_KEYS = {"type", "title", "status", "detail"}


def _assert_problem(response, status):
    assert response.status_code == status
    assert response["Content-Type"] == "application/problem+json"
    body = response.json()
    assert set(body) >= PROBLEM_KEYS
    assert body["status"] == status
    return body


def test_it_answers_an_unknown_api_path_with_a_404_problem(actors):
    _assert_problem(actors.api().get("/v1/api/no-such-thing"), 404)


def test_it_answers_a_missing_key_with_a_401_problem(actors):
    _assert_problem(actors.api(key="").get("/v1/api/traces"), 401)


def test_it_answers_malformed_json_with_a_400_problem(actors):
    response = actors.api().post("/v1/api/traces", data=b"{not json", content_type="application/json")
    body = _assert_problem(response, 400)
    assert "not valid JSON" in body["detail"]


def test_it_answers_a_wrong_method_with_a_405_problem(actors):
    _assert_problem(actors.api().delete("/v1/api/traces"), 405)


def test_validation_problems_list_each_field(actors):
    response = actors.api().post("/v1/api/traces", {"trace_id": "x", "status": "fine"}, format="json")
    body = _assert_problem(response, 400)
    assert body["errors"] == [{"field": "status", "message": "must be one of ok, error"}]


@override_settings(EVALSITE_MAX_BODY_BYTES=2048)
def test_it_answers_413_to_a_body_over_the_limit_and_writes_nothing(actors):
    batch = {"traces": [run_payload(f"big-{i}") for i in range(20)]}
    response = actors.api().post("/v1/api/traces", batch, format="json")
    body = _assert_problem(response, 413)
    assert "2048" in body["detail"]
    assert actors.acme.traces.count() == 0


@pytest.mark.parametrize("path", ["/v1/api/traces", "/v1/api/traces/whatever"])
def test_the_api_never_answers_html_errors(actors, path):
    response = actors.api(key="").get(path)
    assert not response["Content-Type"].startswith("text/html")
