"""One pass names a scorer twice with two configs: each config is scored, stored and reported apart."""

import pytest
from django.test import Client

from checks.scorers import config_hash
from datasets.models import Dataset, GoldenCase
from scoring.models import Abstention, Score
from scoring.passes.rescore import abstentions_rescore
from tests.factories import trace_create
from tests.scoring.test_passes_api import _work

SCHEMA = {"type": "object", "required": ["total_cents"], "properties": {"total_cents": {"type": "integer"}}}
BOTH = ["answered", "json_valid", {"scorer": "json_valid", "config": {"schema": SCHEMA}}]


def _start(actors, body):
    return actors.api().post("/v1/api/passes", body, format="json")


@pytest.fixture
def runs(actors):
    return [
        trace_create(actors.acme, "fits", output='{"total_cents": 7500}'),
        trace_create(actors.acme, "json-off-schema", output='{"total": "75 €"}'),
        trace_create(actors.acme, "prose", output="Focus pro 3h cuesta 75,00 €."),
    ]


def _verdicts(scorer="json_valid"):
    return {
        (s.trace.trace_id, s.config_hash): s.passed for s in Score.objects.filter(scorer=scorer).select_related("trace")
    }


def test_a_pass_scores_json_valid_without_and_with_a_schema_and_reports_each(actors, runs):
    response = _start(actors, {"scorers": BOTH})
    assert response.status_code == 202, response.json()
    assert response.json()["scorers"] == BOTH
    _work(response.json()["id"])

    plain, schema = config_hash({}), config_hash({"schema": SCHEMA})
    assert _verdicts() == {
        ("fits", plain): True, ("fits", schema): True,
        ("json-off-schema", plain): True, ("json-off-schema", schema): False,
        ("prose", plain): False, ("prose", schema): False,
    }  # fmt: skip
    detail = actors.api().get(f"/v1/api/passes/{response.json()['id']}").json()
    assert (detail["status"], detail["written"], detail["skipped"]) == ("done", 9, 0)
    assert detail["scorers"] == BOTH


def test_running_the_pass_again_writes_nothing_new(actors, runs):
    _work(_start(actors, {"scorers": BOTH}).json()["id"])
    again = _start(actors, {"scorers": BOTH}).json()["id"]
    _work(again)

    detail = actors.api().get(f"/v1/api/passes/{again}").json()
    assert (detail["written"], detail["existing"]) == (0, 9)
    assert Score.objects.count() == 9


def test_an_entry_named_twice_alike_is_scored_once(actors, runs):
    entry = {"scorer": "json_valid", "config": {"schema": SCHEMA}}
    response = _start(actors, {"scorers": [entry, "json_valid", entry, "json_valid"]})
    assert response.json()["scorers"] == [entry, "json_valid"]
    _work(response.json()["id"])
    assert Score.objects.count() == 6


def test_a_case_that_configures_the_scorer_wins_for_both_entries_and_is_scored_once(actors):
    dataset = Dataset.objects.create(project=actors.acme, name="reservo")
    case = GoldenCase.objects.create(dataset=dataset, name="quote", expectations={"output_schema": SCHEMA})
    trace_create(actors.acme, "linked", dataset="reservo", case=case.name, output='{"total_cents": 7500}')

    response = actors.api().post("/v1/api/score", {"scorers": BOTH[1:]}, format="json")
    assert response.status_code == 200, response.json()
    assert [(s["scorer"], s["config_hash"]) for s in response.json()["scores"]] == [
        ("json_valid", config_hash({"schema": SCHEMA}))
    ]


def test_the_synchronous_request_takes_the_same_entries(actors, runs):
    response = actors.api().post(
        "/v1/api/score", {"scorers": BOTH[1:], "trace_ids": ["json-off-schema"]}, format="json"
    )
    assert response.status_code == 200, response.json()
    assert sorted((s["config_hash"], s["passed"]) for s in response.json()["scores"]) == sorted(
        [(config_hash({}), True), (config_hash({"schema": SCHEMA}), False)]
    )


def test_an_entrys_bad_config_is_a_400_naming_the_entry(actors, runs):
    body = {"scorers": ["json_valid", {"scorer": "latency_budget", "config": {"ms": -1}}]}
    response = _start(actors, body)
    assert response.status_code == 400
    assert [e["field"] for e in response.json()["errors"]] == ["scorers[1].config.ms"]


def test_an_entry_with_an_unknown_field_or_scorer_is_a_400(actors, runs):
    response = _start(actors, {"scorers": [{"scorer": "json_valid", "configs": {}}]})
    assert response.status_code == 400
    assert "configs" in str(response.json()["errors"])

    response = _start(actors, {"scorers": [{"scorer": "json_validd", "config": {}}]})
    assert response.status_code == 400
    assert [e["field"] for e in response.json()["errors"]] == ["scorers[0]"]


def test_config_by_id_for_a_scorer_named_only_with_configs_of_its_own_is_a_400(actors, runs):
    body = {"scorers": [{"scorer": "latency_budget", "config": {"ms": 10}}], "config": {"latency_budget": {"ms": 5}}}
    response = _start(actors, body)
    assert response.status_code == 400
    assert [e["field"] for e in response.json()["errors"]] == ["config.latency_budget"]


def test_an_entry_without_config_for_a_scorer_that_needs_one_is_a_400(actors, runs):
    response = _start(
        actors, {"scorers": [{"scorer": "latency_budget", "config": {"ms": 10}}, {"scorer": "latency_budget"}]}
    )
    assert response.status_code == 400
    assert [e["field"] for e in response.json()["errors"]] == ["config.latency_budget"]


def test_re_scoring_an_abstention_names_the_scorer_again_with_the_config_it_had(actors):
    trace_create(actors.acme, "unmeasured", latency_ms=None)
    body = {"scorers": [{"scorer": "latency_budget", "config": {"ms": 10}}]}
    _work(_start(actors, body).json()["id"])
    assert Abstention.objects.get().reason == "no_latency"

    started, problems = abstentions_rescore(abstentions=Abstention.objects.all())
    assert problems == []
    assert [p.scorers for p in started] == [body["scorers"]]


def test_the_pass_pages_show_an_entrys_settings_readably(actors, runs):
    pass_id = _start(actors, {"scorers": BOTH}).json()["id"]
    client = Client()
    client.force_login(actors.alice)
    expected = 'answered, json_valid, json_valid (schema = {"type": "object"'
    detail = client.get(f"/p/acme/passes/{pass_id}/").content.decode()
    listing = client.get("/p/acme/passes/").content.decode()
    assert expected in detail.replace("&quot;", '"')
    assert "json_valid (schema = " in listing
    assert "{&#x27;scorer&#x27;" not in detail + listing
