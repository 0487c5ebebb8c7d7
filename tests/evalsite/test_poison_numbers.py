"""A number that cannot be stored and read back exactly is a 400 naming its path, and a
row stored before that rule still reads: one accepted write must never break a list.

On PostgreSQL ``1e20`` in a JSON column comes back as the exact integer
100000000000000000000, which no answer could encode: every list showing it failed.
"""

import importlib
from types import SimpleNamespace

import pytest
from django.apps import apps as django_apps
from django.db import connection

from datasets.models import CaseRevision, Dataset, Experiment, GoldenCase, Trace
from tests.factories import run_payload, trace_create

BIG = 10**20


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/v1/api/traces", {**run_payload("r1"), "metadata": {"n": 1e20}}, "metadata.n"),
        ("/v1/api/traces", {"traces": [run_payload("r0"), {**run_payload("r1"), "metadata": {"n": [1, -1e300]}}]},
         "traces[1].metadata.n[1]"),
        ("/v1/api/traces", {**run_payload("r1"), "metadata": {"n": BIG}}, "metadata.n"),
        ("/v1/api/experiments", {"name": "v1", "metadata": {"n": 1e20}}, "metadata.n"),
        ("/v1/api/experiments", {"name": "v1", "metadata": {"n": 2**63}}, "metadata.n"),
        ("/v1/api/datasets/gold/cases", {"name": "c1", "input": "a", "expectations": {"max_cost_cents": 1e20}},
         "expectations.max_cost_cents"),
    ],
)  # fmt: skip
def test_a_number_beyond_64_bits_is_a_400_naming_its_path(actors, path, body, field):
    Dataset.objects.create(project=actors.acme, name="gold")
    response = actors.api().post(path, body, format="json")
    assert response.status_code == 400, response.content
    assert response.json()["errors"][0]["field"] == field
    assert "64-bit" in response.json()["errors"][0]["message"]
    assert not Trace.objects.exists() and not Experiment.objects.exists() and not GoldenCase.objects.exists()


def test_the_largest_64_bit_integers_are_accepted_and_read_back(actors):
    body = {**run_payload("r1"), "metadata": {"max": 2**63 - 1, "min": -(2**63), "big": 9.2e18}}
    assert actors.api().post("/v1/api/traces", body, format="json").status_code == 201
    listed = actors.api().get("/v1/api/traces/r1").json()
    assert listed["metadata"]["max"] == 2**63 - 1 and listed["metadata"]["min"] == -(2**63)


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"cost_cents": 1e8}, "cost_cents"),
        ({"cost_cents": 99999999.9999999}, "cost_cents"),
        ({"started_at": "0001-01-01T00:00:00+01:00"}, "started_at"),
        ({"started_at": "9999-12-31T23:30:00-01:00"}, "started_at"),
    ],
)
def test_a_cost_or_a_date_the_columns_cannot_hold_is_a_400(actors, fields, field):
    body = {**run_payload("r1", spans=[]), **fields}
    body.pop("ended_at", None)
    response = actors.api().post("/v1/api/traces", body, format="json")
    assert response.status_code == 400, response.content
    assert response.json()["errors"][0]["field"] == field
    assert not Trace.objects.exists()


def test_span_costs_adding_up_past_the_column_are_a_400(actors):
    spans = [{"span_id": f"s{i}", "kind": "llm", "name": "call", "cost_cents": 99_999_999} for i in range(2)]
    body = {**run_payload("r1", spans=spans)}
    body.pop("cost_cents", None)
    response = actors.api().post("/v1/api/traces", body, format="json")
    assert response.status_code == 400, response.content
    assert response.json()["errors"][0]["field"] == "cost_cents"
    assert not Trace.objects.exists()


def _poisoned_rows(actors):
    """Rows as an older server stored them: integers beyond 64 bits in JSON columns."""
    dataset = Dataset.objects.create(project=actors.acme, name="gold")
    Experiment.objects.create(project=actors.acme, name="v1", dataset=dataset, metadata={"n": BIG})
    trace_create(actors.acme, "r1", experiment="v1")
    Trace.objects.filter(trace_id="r1").update(metadata={"n": BIG}, input={"n": -BIG})
    GoldenCase.objects.create(dataset=dataset, name="c1", input="a", expectations={}, metadata={"n": BIG})
    return dataset


def test_lists_and_exports_read_rows_stored_with_numbers_beyond_64_bits(actors):
    _poisoned_rows(actors)
    api = actors.api()
    for path in [
        "/v1/api/traces",
        "/v1/api/traces/r1",
        "/v1/api/experiments",
        "/v1/api/datasets/gold/cases",
        "/v1/api/datasets/gold/export?format=jsonl",
    ]:
        response = api.get(path)
        assert response.status_code == 200, (path, response.content[:300])
        body = b"".join(response.streaming_content) if response.streaming else response.content
        assert b"100000000000000000000" in body, path


def test_the_data_migration_turns_such_numbers_into_their_text(actors):
    _poisoned_rows(actors)
    migration = importlib.import_module("datasets.migrations.0010_json_numbers_in_range")
    migration.repair(django_apps, SimpleNamespace(connection=connection))
    trace = Trace.objects.get(trace_id="r1")
    assert trace.metadata == {"n": "100000000000000000000"} and trace.input == {"n": "-100000000000000000000"}
    assert Experiment.objects.get(name="v1").metadata == {"n": "100000000000000000000"}
    assert GoldenCase.objects.get(name="c1").metadata == {"n": "100000000000000000000"}
    assert not CaseRevision.objects.filter(new__n=BIG).exists()
