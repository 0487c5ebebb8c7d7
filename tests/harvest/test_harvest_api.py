"""The failure groups' API and a dataset's coverage, through HTTP with project keys."""

from django.db import connection
from django.test.utils import CaptureQueriesContext

from datasets.models import Dataset
from harvest.models import FailureGroup
from harvest.services import groups_build
from tests.harvest.traffic import MODES, traffic_create

PLANTED = sum(m.count for m in MODES)


def _built(actors):
    planted = traffic_create(actors.acme)
    groups_build(project_id=actors.acme.pk)
    return planted


def test_the_list_is_paged_biggest_first(actors):
    _built(actors)
    first = actors.api().get("/v1/api/failure-groups?window=7d&page_size=2").json()
    assert [g["window_size"] for g in first["results"]] == [120, 60]
    second = actors.api().get(first["next"]).json()
    assert [g["window_size"] for g in second["results"]] == [45, 30]
    assert first["results"][0]["covered"] is False
    assert len(first["results"][0]["representatives"]) == 3


def test_the_list_filters_by_signature_and_scorer(actors):
    _built(actors)
    signature = "checks: tool_choice | tools: quote_room | error: none"
    answer = actors.api().get("/v1/api/failure-groups", {"signature": signature}).json()
    assert sorted(g["window_size"] for g in answer["results"]) == [60, 120]
    answer = actors.api().get("/v1/api/failure-groups", {"scorer": "json_valid"}).json()
    assert [g["window_size"] for g in answer["results"]] == [45]


def test_a_bad_window_is_a_400_naming_it(actors):
    response = actors.api().get("/v1/api/failure-groups?window=7w")
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "window"


def test_a_bad_cursor_is_a_400_naming_it(actors):
    response = actors.api().get("/v1/api/failure-groups?cursor=bm9wZQ")
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "cursor"


def test_a_group_is_read_with_its_runs(actors):
    planted = _built(actors)
    group = actors.api().get("/v1/api/failure-groups?scorer=json_valid").json()["results"][0]
    detail = actors.api().get(f"/v1/api/failure-groups/{group['id']}").json()
    assert {r["trace_id"] for r in detail["runs"]} == set(planted["bad_json"])
    assert detail["reasons"][0]["scorer"] == "json_valid"


def test_an_outsider_gets_404_for_a_group(actors):
    _built(actors)
    group = actors.api().get("/v1/api/failure-groups").json()["results"][0]
    assert actors.outsider_api().get(f"/v1/api/failure-groups/{group['id']}").status_code == 404
    assert actors.outsider_api().get("/v1/api/failure-groups").json()["results"] == []


def test_coverage_moves_from_zero_to_the_planted_share_as_cases_are_captured(actors):
    planted = _built(actors)
    api = actors.api()
    assert api.post("/v1/api/datasets", {"name": "golden"}, format="json").status_code == 201
    assert api.get("/v1/api/datasets/golden/coverage").json()["share"] == 0
    captured = 0
    for mode in MODES:
        group = api.get("/v1/api/failure-groups", {"scorer": mode.failed}).json() if mode.failed else None
        body = {"trace_ids": [planted[mode.name][0]], "expected_output": "the corrected answer"}
        assert api.post("/v1/api/datasets/golden/cases/from-traces", body, format="json").status_code in (200, 201)
        captured += mode.count
        coverage = api.get("/v1/api/datasets/golden/coverage").json()
        assert coverage["window_runs"] == PLANTED
        assert coverage["covered_runs"] == captured, (mode.name, coverage, group)
    assert coverage["share"] == 1.0 and coverage["uncovered"] == []


def test_a_case_with_a_similar_input_covers_a_group(actors):
    _built(actors)
    dataset = Dataset.objects.create(project=actors.acme, name="written")
    actors.api().post(
        "/v1/api/datasets/written/cases",
        {"name": "json", "input": "Export my invoices of July as a JSON document"},
        format="json",
    )
    coverage = actors.api().get("/v1/api/datasets/written/coverage").json()
    assert coverage["covered_runs"] == 45 and dataset.pk


def test_a_rebuild_needs_curate(actors):
    assert actors.ci_api().post("/v1/api/failure-groups/rebuild").status_code == 403
    assert actors.ci_api(scopes=("curate",)).post("/v1/api/failure-groups/rebuild").status_code == 202


def _queries(api, path):
    with CaptureQueriesContext(connection) as queries:
        assert api.get(path).status_code == 200
    return len(queries)


def test_the_list_costs_the_same_queries_for_two_groups_as_for_six(actors):
    _built(actors)
    api = actors.api()
    api.get("/v1/api/failure-groups")  # the key's first use of the minute writes its last use
    six = _queries(api, "/v1/api/failure-groups")
    keep = list(FailureGroup.objects.order_by("-size").values_list("pk", flat=True)[:2])
    FailureGroup.objects.exclude(pk__in=keep).delete()
    assert _queries(api, "/v1/api/failure-groups") == six
