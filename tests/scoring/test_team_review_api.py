"""Team review over the API: queues' team fields, agreement, adjudication, and what a CI key may not do."""

import pytest

from evalsite.models import Role
from evalsite.projects import membership_set
from scoring.labels import label_config_create
from scoring.review.adjudication import reference_label
from scoring.review.assignment import queue_label
from scoring.review.queue import queue_filter_get
from tests.base import user_create
from tests.factories import trace_create


@pytest.fixture
def api_team(actors):
    actors.dana = user_create("dana")
    membership_set(user=actors.dana, project=actors.acme, role=Role.REVIEWER)
    actors.config = label_config_create(project=actors.acme, data={"name": "helpful"})
    actors.runs = [trace_create(actors.acme, f"r{i}") for i in (1, 2)]
    return actors


def _created(actors, **extra):
    body = {"name": "pair", "reviewers_per_item": 2, "blind": True, "assignees": ["bob", "dana"], **extra}
    response = actors.api().post("/v1/api/queues", body, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def test_a_queue_is_created_with_its_team_fields_and_changed(api_team):
    body = _created(api_team)
    assert (body["assignees"], body["reviewers_per_item"], body["blind"]) == (["bob", "dana"], 2, True)
    assert body["progress"] == {"done": 0, "total": 2}
    changed = api_team.api().patch(f"/v1/api/queues/{body['id']}", {"blind": False, "assignees": []}, format="json")
    assert changed.status_code == 200 and (changed.json()["blind"], changed.json()["assignees"]) == (False, [])
    listed = api_team.api().get("/v1/api/queues").json()["results"]
    assert [q["name"] for q in listed] == ["pair"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"reviewers_per_item": 0}, "reviewers_per_item"),
        ({"reviewers_per_item": "many"}, "reviewers_per_item"),
        ({"blind": "perhaps"}, "blind"),
        ({"assignees": ["victor"]}, "assignees"),
        ({"assignees": "bob"}, "assignees"),
        ({"name": ""}, "name"),
    ],
)
def test_bad_team_fields_are_a_400_naming_the_field(api_team, body, field):
    response = api_team.api().post("/v1/api/queues", {"name": "q", **body}, format="json")
    assert response.status_code == 400
    assert field in [e["field"] for e in response.json()["errors"]]
    assert not api_team.acme.queue_filters.exists()
    patch_body = {k: v for k, v in body.items() if k != "name"}
    if patch_body:
        queue = _created(api_team, name="ok")
        patched = api_team.api().patch(f"/v1/api/queues/{queue['id']}", patch_body, format="json")
        assert patched.status_code == 400 and field in [e["field"] for e in patched.json()["errors"]]


def test_agreement_disagreements_and_a_decision(api_team):
    queue = queue_filter_get(project=api_team.acme, queue_id=_created(api_team)["id"])
    r1, r2 = api_team.runs
    for run, bob, dana in ((r1, True, False), (r2, True, True)):
        queue_label(queue=queue, trace=run, user=api_team.bob, values=[(api_team.config, bob)])
        queue_label(queue=queue, trace=run, user=api_team.dana, values=[(api_team.config, dana)])
    agreement = api_team.api().get(f"/v1/api/queues/{queue.pk}/agreement").json()
    assert agreement["labels"] == [
        {"config": "helpful", "kind": "boolean", "method": "kappa", "value": 0.0, "items": 2, "reviewers": 2}
    ]  # bob always yes: p_e = p_o = 1/2, kappa 0
    found = api_team.api().get(f"/v1/api/queues/{queue.pk}/adjudications").json()["results"]
    assert [(d["trace_id"], d["config"]) for d in found] == [("r1", "helpful")]
    url = f"/v1/api/queues/{queue.pk}/adjudications"
    bad = api_team.api().post(url, {"trace_id": "r1", "config": "helpful", "value": 3}, format="json")
    assert bad.status_code == 400 and [e["field"] for e in bad.json()["errors"]] == ["value"]
    decided = api_team.api().post(url, {"trace_id": "r1", "config": "helpful", "value": False}, format="json")
    assert decided.status_code == 201
    assert (decided.json()["decided_by"], decided.json()["value"], decided.json()["passed"]) == ("ci", False, False)
    assert {r["author"] for r in decided.json()["reviewers"]} == {"bob", "dana"}
    again = api_team.api().post(url, {"trace_id": "r1", "config": "helpful", "value": True}, format="json")
    assert again.status_code == 200 and reference_label(r1, api_team.config).passed is True
    assert api_team.api().get(url).json()["results"] == []


def test_a_ci_key_can_neither_label_nor_adjudicate_nor_save_a_queue(api_team):
    queue = _created(api_team)
    ci = api_team.ci_api()
    for path, body, scope in (
        ("/v1/api/traces/r1/labels", {"config": "helpful", "value": True}, "label"),
        (
            f"/v1/api/queues/{queue['id']}/adjudications",
            {"trace_id": "r1", "config": "helpful", "value": True},
            "curate",
        ),
        ("/v1/api/queues", {"name": "mine"}, "curate"),
    ):
        response = ci.post(path, body, format="json")
        assert response.status_code == 403, path
        assert response.json()["required_scope"] == scope and repr(scope) in response.json()["detail"]
    patched = ci.patch(f"/v1/api/queues/{queue['id']}", {"blind": False}, format="json")
    assert patched.status_code == 403 and patched.json()["required_scope"] == "curate"
    assert ci.get(f"/v1/api/queues/{queue['id']}/agreement").status_code == 200, "reading is allowed"
    assert reference_label(api_team.runs[0], api_team.config) is None
