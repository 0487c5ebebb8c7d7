"""JSON nested deeper than 64 levels is a 400 naming where, on every JSON entry point, and
nothing of the request is stored. (Past 254 levels the answers' encoder gave up: a 500,
after the write had been made.)
"""

import json

import pytest
from django.test import Client

from datasets.models import Dataset, Experiment, GoldenCase, Trace
from tests.factories import run_payload, trace_create

LIMIT = 64


def nested(levels):
    """``levels`` objects one inside the other: ``{"a": {"a": ... {}}}``."""
    value = {}
    for _ in range(levels - 1):
        value = {"a": value}
    return value


def test_a_body_at_the_limit_is_taken(actors):
    body = {**run_payload("r1"), "metadata": nested(LIMIT - 1)}  # the body is the 64th level
    response = actors.api().post("/v1/api/traces", body, format="json")
    assert response.status_code == 201, response.content


@pytest.mark.parametrize("levels", [LIMIT, 300, 1000, 5000])
def test_a_run_nested_too_deep_is_a_400_naming_where(actors, levels):
    body = json.dumps({**run_payload("r1"), "metadata": {"x": nested(levels)}}) if levels < 900 else (
        '{"trace_id": "r1", "metadata": ' + '{"a": ' * levels + "{}" + "}" * levels + "}"
    )  # fmt: skip
    response = actors.api().post("/v1/api/traces", body, content_type="application/json")
    assert response.status_code == 400, response.content[:300]
    error = response.json()["errors"][0]
    assert error["message"] == "is nested deeper than 64 levels"
    assert error["field"].startswith("metadata") or error["field"] == "body"
    assert not Trace.objects.exists()


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v1/api/experiments", {"name": "v1", "metadata": nested(300)}),
        ("/v1/api/datasets/gold/cases", {"name": "c1", "input": nested(100)}),
        ("/v1/api/traces", {"traces": [run_payload("r0"), {**run_payload("r1"), "output": [nested(70)]}]}),
        ("/v1/api/score", {"scorers": ["exact_match"], "config": nested(80)}),
    ],
)
def test_every_json_body_keeps_the_limit_and_stores_nothing(actors, path, body):
    Dataset.objects.create(project=actors.acme, name="gold")
    response = actors.api().post(path, body, format="json")
    assert response.status_code == 400, response.content[:300]
    assert response.json()["errors"][0]["message"] == "is nested deeper than 64 levels"
    assert not Experiment.objects.exists() and not GoldenCase.objects.exists() and not Trace.objects.exists()


def test_an_import_line_nested_too_deep_is_named_by_its_line(actors):
    Dataset.objects.create(project=actors.acme, name="gold")
    lines = [json.dumps({"name": "ok", "input": "a"}), json.dumps({"name": "deep", "input": nested(200)})]
    response = actors.api().post(
        "/v1/api/datasets/gold/import", data="\n".join(lines).encode(), content_type="application/jsonl"
    )
    assert response.status_code == 400, response.content[:300]
    error = response.json()["errors"][0]
    assert error["line"] == 2 and "nested deeper than 64 levels" in error["message"]
    assert not GoldenCase.objects.exists()


def _any_value(levels):
    value = {"stringValue": "leaf"}
    for _ in range(levels):
        value = {"kvlistValue": {"values": [{"key": "k", "value": value}]}}
    return value


def _otlp_json(attribute_value):
    span = {
        "traceId": "5b8efff798038103d269b633813fc60c",
        "spanId": "eee19b7ec3c1b174",
        "name": "agent",
        "startTimeUnixNano": "1700000000000000000",
        "endTimeUnixNano": "1700000001000000000",
        "attributes": [{"key": "deep", "value": attribute_value}],
    }
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}).encode()


@pytest.mark.parametrize("levels", [20, 200])
def test_an_otlp_attribute_value_nested_too_deep_is_a_400(actors, levels):
    response = Client().post(
        "/v1/traces",
        data=_otlp_json(_any_value(levels)),
        content_type="application/json",
        headers={"Authorization": f"Bearer {actors.acme_key}"},
    )
    assert response.status_code == 400, response.content[:300]
    assert "nested deeper than 64 levels" in response.json()["message"]
    assert not Trace.objects.exists()


def test_an_otlp_attribute_value_within_the_limit_is_taken(actors):
    response = Client().post(
        "/v1/traces",
        data=_otlp_json(_any_value(5)),
        content_type="application/json",
        headers={"Authorization": f"Bearer {actors.acme_key}"},
    )
    assert response.status_code == 200, response.content[:300]
    assert Trace.objects.count() == 1


def test_a_case_form_with_json_nested_too_deep_says_so(actors):
    trace_create(actors.acme, "failed-run", input="q", output="a")
    Dataset.objects.create(project=actors.acme, name="reservo")
    client = Client()
    client.force_login(actors.bob)
    response = client.post(
        "/p/acme/runs/failed-run/",
        {"dataset": "reservo", "expected_output_format": "text", "expectations": json.dumps(nested(100))},
    )
    assert response.status_code == 400
    assert "nested deeper than 64 levels" in response.content.decode()
    assert not GoldenCase.objects.exists()
