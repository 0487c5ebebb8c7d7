"""Labels: configs of three kinds, labels on runs with their history, filters, compare and the gate."""

import pytest

from datasets.models import Dataset, GoldenCase
from gating.models import GatePolicy
from scoring.models import LabelConfig, Score
from tests.factories import trace_create


@pytest.fixture
def configs(actors):
    api = actors.api()
    for body in (
        {"name": "helpful", "description": "Did it help?"},
        {"name": "tone", "kind": "categorical", "options": ["rude", "neutral", "warm"], "passing": ["neutral", "warm"]},
        {"name": "quality", "kind": "numeric", "minimum": 1, "maximum": 5, "pass_threshold": 4},
    ):
        response = api.post("/v1/api/label-configs", body, format="json")
        assert response.status_code == 201, response.content
    return api


def _label(api, trace_id, config, value, comment=""):
    return api.post(
        f"/v1/api/traces/{trace_id}/labels", {"config": config, "value": value, "comment": comment}, format="json"
    )


def test_each_kind_takes_its_values_and_names_the_field_otherwise(actors, configs):
    trace_create(actors.acme, "r1")
    assert _label(configs, "r1", "helpful", True).status_code == 201
    assert _label(configs, "r1", "tone", "warm").status_code == 201
    quality = _label(configs, "r1", "quality", 3).json()
    assert (quality["value"], quality["passed"], quality["author"]) == (3, False, actors.acme.api_keys.first().name)
    for config, value in (("helpful", "yes"), ("tone", "angry"), ("quality", 6), ("quality", True)):
        response = _label(configs, "r1", config, value)
        assert response.status_code == 400 and response.json()["errors"][0]["field"] == "value", (config, value)
    scores = {s.scorer: s for s in Score.objects.filter(source="human")}
    assert (scores["label:tone"].value, scores["label:tone"].passed) == (1.0, True)
    assert scores["label:quality"].value == 0.5


def test_a_second_label_by_the_same_author_replaces_the_first_and_keeps_it(actors, configs):
    trace_create(actors.acme, "r1")
    _label(configs, "r1", "helpful", True, "fine")
    assert _label(configs, "r1", "helpful", True, "fine").status_code == 200
    changed = _label(configs, "r1", "helpful", False, "wrong room").json()
    assert (changed["value"], changed["comment"]) == (False, "wrong room")
    assert [(h["label"], h["comment"]) for h in changed["history"]] == [(True, "fine")]
    assert Score.objects.filter(source="human").count() == 1


def test_bad_configs_are_named_and_archived_ones_take_no_labels(actors, configs):
    for body, field in (
        ({"name": "x", "kind": "stars"}, "kind"),
        ({"name": "x", "kind": {}, "options": []}, "kind"),
        ({"name": "y", "kind": "categorical", "options": ["only"]}, "options"),
        ({"name": "z", "kind": "numeric", "minimum": 5, "maximum": 1}, "maximum"),
        ({"name": "has:colon"}, "name"),
        ({"name": "helpful"}, "name"),
    ):
        response = configs.post("/v1/api/label-configs", body, format="json")
        assert response.status_code == 400 and response.json()["errors"][0]["field"] == field, body
    assert configs.patch("/v1/api/label-configs/helpful", {"kind": "numeric"}, format="json").status_code == 400
    assert configs.patch("/v1/api/label-configs/helpful", {"archived": True}, format="json").json()["archived"]
    trace_create(actors.acme, "r1")
    response = _label(configs, "r1", "helpful", True)
    assert response.status_code == 400 and response.json()["errors"][0]["field"] == "config"


def test_a_config_refuses_the_fields_of_another_kind_naming_them(actors, configs):
    for body, fields in (
        ({"name": "b", "options": ["yes", "no"]}, ["options"]),
        ({"name": "b", "kind": "boolean", "minimum": 0, "passing": ["yes"]}, ["passing", "minimum"]),
        ({"name": "c", "kind": "categorical", "options": ["a", "b"], "pass_threshold": 1}, ["pass_threshold"]),
        ({"name": "n", "kind": "numeric", "minimum": 1, "maximum": 5, "options": ["a", "b"]}, ["options"]),
    ):
        response = configs.post("/v1/api/label-configs", body, format="json")
        assert response.status_code == 400, body
        assert [e["field"] for e in response.json()["errors"]] == fields
        assert "does not apply to a" in response.json()["errors"][0]["message"]
    response = configs.patch("/v1/api/label-configs/helpful", {"options": ["yes", "no"]}, format="json")
    assert response.status_code == 400 and response.json()["errors"][0]["field"] == "options"
    assert configs.get("/v1/api/label-configs/helpful").json()["options"] == []


def test_labels_of_another_project_are_not_found(actors, configs):
    trace_create(actors.acme, "r1")
    outsider = actors.outsider_api()
    assert outsider.get("/v1/api/label-configs/helpful").status_code == 404
    assert (
        outsider.post("/v1/api/traces/r1/labels", {"config": "helpful", "value": True}, format="json").status_code
        == 404
    )
    assert outsider.get("/v1/api/traces/r1/labels").status_code == 404


def test_runs_filter_by_label_and_compare_lists_labels_as_scorers(actors, configs):
    for i, helpful in enumerate((True, False, False)):
        trace_create(actors.acme, f"v1-{i}", experiment="v1")
        trace_create(actors.acme, f"v2-{i}", experiment="v2")
        _label(configs, f"v1-{i}", "helpful", helpful)
        _label(configs, f"v2-{i}", "helpful", True)
    listed = configs.get("/v1/api/traces", {"label": "helpful:false"}).json()["results"]
    assert sorted(r["trace_id"] for r in listed) == ["v1-1", "v1-2"]
    assert len(configs.get("/v1/api/traces", {"label": "helpful:any"}).json()["results"]) == 6
    row = next(
        r
        for r in configs.get("/v1/api/experiments/compare?base=v1&candidate=v2").json()["scorers"]
        if r["scorer"] == "label:helpful"
    )
    assert (row["base"]["mean"], row["candidate"]["mean"], row["base"]["n"]) == (pytest.approx(1 / 3), 1.0, 3)


def test_a_gate_policy_may_gate_on_a_label(actors, configs):
    dataset = Dataset.objects.create(project=actors.acme, name="desk")
    for name in ("a", "b", "c"):
        GoldenCase.objects.create(dataset=dataset, name=name)
        trace_create(actors.acme, f"v1-{name}", experiment="v1", dataset="desk", case=name)
    _label(configs, "v1-a", "helpful", True)
    _label(configs, "v1-b", "helpful", False, "did not answer")
    assert (
        configs.put("/v1/api/datasets/desk/gate-policy", {"scorers": ["label:helpful"]}, format="json").status_code
        == 200
    )
    assert (
        configs.put("/v1/api/datasets/desk/gate-policy", {"scorers": ["label:nope"]}, format="json").status_code == 400
    )
    answer = configs.post("/v1/api/gate", {"dataset": "desk", "experiment": "v1"}, format="json").json()
    by_name = {c["name"]: c for c in answer["cases"]}
    assert (by_name["a"]["passed"], by_name["b"]["passed"], by_name["c"]["measured"]) == (True, False, False)
    assert by_name["b"]["reasons"][0].startswith("label:helpful: labelled ")
    assert "did not answer" in by_name["b"]["reasons"][0]
    assert by_name["c"]["unmeasured_checks"] == ["judge"]


def test_configuring_a_judge_criterion_creates_its_label_config(actors):
    from scoring.judge.services import judge_configure

    judge_configure(
        project=actors.acme, endpoint="http://127.0.0.1:9/v1", model="m", criteria={"relevant": "Relevant?"}
    )
    config = LabelConfig.objects.get(project=actors.acme, name="relevant")
    assert (config.kind, config.criterion, config.description) == ("boolean", True, "Relevant?")
    assert GatePolicy.objects.count() == 0
