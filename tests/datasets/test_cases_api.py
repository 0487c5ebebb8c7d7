"""Golden cases through the API: create, list, read, edit with revisions, archive."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from datasets.models import CaseRevision, Dataset, GoldenCase
from tests.factories import trace_create

EXPECTATIONS = {"expected_tools": ["quote_room"], "tool_match": "exact", "target_tool": "quote_room"}


@pytest.fixture
def api(actors):
    client = actors.api()
    assert client.post("/v1/api/datasets", {"name": "reservo"}, format="json").status_code == 201
    return client


def _create(api, **fields):
    response = api.post("/v1/api/datasets/reservo/cases", {"name": "quote_focus_pro_3h", **fields}, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def _errors(response):
    assert response["Content-Type"] == "application/problem+json"
    return {e["field"]: e["message"] for e in response.json()["errors"]}


def test_it_creates_a_case_with_its_first_revision(api, actors):
    case = _create(api, input="¿Cuánto cuesta Focus pro 3h?", expected_output="75,00 EUR", expectations=EXPECTATIONS)
    assert case["version"] == 1
    assert case["status"] == "active"
    assert case["needs_expected_output"] is False
    detail = api.get(f"/v1/api/cases/{case['id']}").json()
    [revision] = detail["revisions"]
    assert revision["action"] == "created"
    assert revision["changed_by_key"] == "ci"
    assert revision["old"] is None
    assert revision["new"]["expected_output"] == "75,00 EUR"


def test_a_case_without_expected_output_needs_one(api):
    assert _create(api)["needs_expected_output"] is True


def test_a_typo_in_expectations_is_a_400_naming_the_field(api):
    response = api.post(
        "/v1/api/datasets/reservo/cases",
        {"name": "x", "expectations": {"expected_tool": ["quote_room"]}},
        format="json",
    )
    assert response.status_code == 400
    errors = _errors(response)
    assert list(errors) == ["expectations.expected_tool"]
    assert "did you mean 'expected_tools'" in errors["expectations.expected_tool"]
    assert not GoldenCase.objects.exists()


@pytest.mark.parametrize(
    ("expectations", "field"),
    [
        ({"tool_match": "exactly"}, "expectations.tool_match"),
        ({"expected_tools": ["quote_room", 3]}, "expectations.expected_tools[1]"),
        ({"latency_threshold_ms": -1}, "expectations.latency_threshold_ms"),
        ({"required_span": {"kind": "tool", "nme": "x"}}, "expectations.required_span.nme"),
        ({"tool_output_schema": {"type": "objekt"}}, "expectations.tool_output_schema"),
        ({"output_schema": {"$schema": 7}}, "expectations.output_schema"),
        ("quote_room", "expectations"),
    ],
)
def test_it_names_the_path_of_each_bad_expectation(api, expectations, field):
    response = api.post("/v1/api/datasets/reservo/cases", {"name": "x", "expectations": expectations}, format="json")
    assert response.status_code == 400
    assert field in _errors(response)


def test_it_refuses_unknown_case_fields(api):
    response = api.post("/v1/api/datasets/reservo/cases", {"name": "x", "expected": "75"}, format="json")
    assert response.status_code == 400
    assert "did you mean 'expected_output'" in _errors(response)["expected"]


def test_it_requires_a_name_and_refuses_a_taken_one(api):
    assert "name" in _errors(api.post("/v1/api/datasets/reservo/cases", {"input": "hi"}, format="json"))
    _create(api)
    response = api.post("/v1/api/datasets/reservo/cases", {"name": "quote_focus_pro_3h"}, format="json")
    assert response.status_code == 409
    assert "name" in _errors(response)


def test_a_case_created_with_a_source_run_links_it(api, actors):
    trace_create(actors.acme, "run-7")
    case = _create(api, source_trace_id="run-7")
    assert case["source_trace_id"] == "run-7"
    assert case["source_run_available"] is True
    twin = api.post("/v1/api/datasets/reservo/cases", {"name": "again", "source_trace_id": "run-7"}, format="json")
    assert twin.status_code == 409
    assert "source_trace_id" in _errors(twin)


def test_ci_lists_the_active_cases_with_what_it_needs(api):
    first = _create(api, input="q1", expectations=EXPECTATIONS)
    _create(api, name="draft_one", status="draft")
    archived = _create(api, name="old_one")
    api.delete(f"/v1/api/cases/{archived['id']}")
    body = api.get("/v1/api/datasets/reservo/cases").json()
    [case] = body["results"]
    assert case["id"] == first["id"]
    assert {k: case[k] for k in ("name", "input", "expectations", "expected_output", "version", "status")} == {
        "name": "quote_focus_pro_3h",
        "input": "q1",
        "expectations": EXPECTATIONS,
        "expected_output": None,
        "version": 1,
        "status": "active",
    }
    assert set(case) >= {"notes", "metadata", "source_trace_id", "needs_expected_output"}


def test_the_case_list_filters_by_status_and_expected_answer(api):
    _create(api, name="a", expected_output="x")
    _create(api, name="b")
    _create(api, name="c", status="draft")

    def names(query):
        response = api.get("/v1/api/datasets/reservo/cases?" + query)
        assert response.status_code == 200, response.content
        return [c["name"] for c in response.json()["results"]]

    assert names("") == ["a", "b"]
    assert names("status=draft") == ["c"]
    assert names("status=all") == ["a", "b", "c"]
    assert names("needs_expected_output=true") == ["b"]
    assert names("needs_expected_output=false") == ["a"]
    assert api.get("/v1/api/datasets/reservo/cases?status=gone").status_code == 400


def test_the_case_list_pages_in_id_order(api):
    for i in range(5):
        _create(api, name=f"c{i}")
    first = api.get("/v1/api/datasets/reservo/cases?page_size=2").json()
    second = api.get(first["next"]).json()
    third = api.get(second["next"]).json()
    assert [c["name"] for c in first["results"] + second["results"] + third["results"]] == [f"c{i}" for i in range(5)]
    assert third["next"] is None


def test_the_case_list_costs_a_fixed_number_of_queries(api, actors):
    _create(api, name="c0")
    api.get("/v1/api/datasets/reservo/cases")
    with CaptureQueriesContext(connection) as few:
        api.get("/v1/api/datasets/reservo/cases")
    for i in range(1, 15):
        trace_create(actors.acme, f"r{i}")
        _create(api, name=f"c{i}", source_trace_id=f"r{i}")
    with CaptureQueriesContext(connection) as many:
        assert len(api.get("/v1/api/datasets/reservo/cases").json()["results"]) == 15
    assert len(many) == len(few)


def test_patch_writes_a_revision_with_who_when_old_and_new(api):
    case = _create(api, input="q", notes="first")
    response = api.patch(
        f"/v1/api/cases/{case['id']}", {"expected_output": "75,00 EUR", "notes": "first"}, format="json"
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["version"] == 2
    assert body["needs_expected_output"] is False
    latest = body["revisions"][0]
    assert latest["version"] == 2
    assert latest["action"] == "updated"
    assert latest["changed_by_key"] == "ci"
    assert latest["changed_at"]
    # Only the field that changed is recorded: notes was sent with its current value.
    assert latest["old"] == {"expected_output": None}
    assert latest["new"] == {"expected_output": "75,00 EUR"}


def test_a_patch_that_changes_nothing_writes_no_revision(api):
    case = _create(api, input="q")
    body = api.patch(f"/v1/api/cases/{case['id']}", {"input": "q"}, format="json").json()
    assert body["version"] == 1
    assert len(body["revisions"]) == 1


def test_patch_refuses_bad_fields_and_the_source_run(api):
    case = _create(api)
    response = api.patch(
        f"/v1/api/cases/{case['id']}",
        {"expectations": {"tool_match": "sometimes"}, "source_trace_id": "other", "status": "gone"},
        format="json",
    )
    assert response.status_code == 400
    assert set(_errors(response)) == {"expectations.tool_match", "source_trace_id", "status"}
    assert GoldenCase.objects.get().version == 1


def test_patch_refuses_a_name_taken_by_another_case(api):
    _create(api, name="a")
    b = _create(api, name="b")
    response = api.patch(f"/v1/api/cases/{b['id']}", {"name": "a"}, format="json")
    assert response.status_code == 409
    assert "name" in _errors(response)


def test_an_edit_based_on_an_old_version_is_a_409(api):
    case = _create(api)
    url = f"/v1/api/cases/{case['id']}"
    assert api.patch(url, {"notes": "mine", "version": 1}, format="json").status_code == 200
    stale = api.patch(url, {"notes": "theirs", "version": 1}, format="json")
    assert stale.status_code == 409
    assert _errors(stale) == {"version": "is 2 now"}
    assert GoldenCase.objects.get().notes == "mine"


def test_delete_archives_and_never_deletes(api):
    case = _create(api)
    url = f"/v1/api/cases/{case['id']}"
    response = api.delete(url)
    assert response.status_code == 200
    assert response.json()["status"] == "archived"
    assert response.json()["revisions"][0]["action"] == "archived"
    assert response.json()["revisions"][0]["old"] == {"status": "active"}
    assert GoldenCase.objects.filter(pk=case["id"]).exists()
    assert api.get(url).status_code == 200
    again = api.delete(url).json()
    assert again["version"] == 2


def test_patch_restores_an_archived_case_with_a_revision(api):
    case = _create(api)
    url = f"/v1/api/cases/{case['id']}"
    api.delete(url)
    body = api.patch(url, {"status": "active"}, format="json").json()
    assert body["status"] == "active"
    assert body["version"] == 3
    assert [r["action"] for r in body["revisions"]] == ["restored", "archived", "created"]


def test_expected_output_can_be_unset_again(api):
    case = _create(api, expected_output="x")
    body = api.patch(f"/v1/api/cases/{case['id']}", {"expected_output": None}, format="json").json()
    assert body["needs_expected_output"] is True
    assert body["revisions"][0]["old"] == {"expected_output": "x"}


def test_json_values_of_different_types_are_a_change(api):
    case = _create(api, expected_output=1)
    body = api.patch(f"/v1/api/cases/{case['id']}", {"expected_output": True}, format="json").json()
    assert body["version"] == 2
    assert body["expected_output"] is True


def test_an_archived_dataset_takes_no_changes(api, actors):
    case = _create(api)
    Dataset.objects.filter(name="reservo").update(archived=True)
    assert api.patch(f"/v1/api/cases/{case['id']}", {"notes": "x"}, format="json").status_code == 409
    assert api.post("/v1/api/datasets/reservo/cases", {"name": "new"}, format="json").status_code == 409


def test_an_outsider_gets_404_for_every_case_endpoint(api, actors):
    case = _create(api)
    outsider = actors.outsider_api()
    url = f"/v1/api/cases/{case['id']}"
    assert outsider.get(url).status_code == 404
    assert outsider.patch(url, {"notes": "mine now"}, format="json").status_code == 404
    assert outsider.delete(url).status_code == 404
    assert outsider.get("/v1/api/datasets/reservo/cases").status_code == 404
    assert outsider.post("/v1/api/datasets/reservo/cases", {"name": "x"}, format="json").status_code == 404
    stored = GoldenCase.objects.get()
    assert (stored.notes, stored.status, stored.version) == ("", "active", 1)
    assert CaseRevision.objects.count() == 1


def test_an_unknown_case_is_404(api):
    assert api.get("/v1/api/cases/999999").status_code == 404


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"name": "a\u0000b"}, "name"),
        ({"name": "x", "notes": "a\u0000b"}, "notes"),
        ({"name": "x", "input": {"q": ["a\u0000b"]}}, "input.q[0]"),
        ({"name": "x", "expected_output": "a\u0000"}, "expected_output"),
        ({"name": "x", "metadata": {"k\u0000": 1}}, "metadata.k\\u0000"),
        ({"name": "x", "expectations": {"contains": "a\u0000"}}, "expectations.contains"),
        ({"name": "x", "source_trace_id": "r\u0000"}, "source_trace_id"),
    ],
)
def test_a_value_no_database_can_store_is_a_400_naming_the_field(api, fields, field):
    response = api.post("/v1/api/datasets/reservo/cases", fields, format="json")
    assert response.status_code == 400
    assert field in _errors(response)


def test_a_value_nested_too_deeply_is_a_400(api):
    deep = "x"
    for _ in range(100):
        deep = [deep]
    response = api.post("/v1/api/datasets/reservo/cases", {"name": "x", "input": deep}, format="json")
    assert response.status_code == 400
    [(field, message)] = _errors(response).items()
    assert field.startswith("input[0]") and message == "is nested deeper than 64 levels"


def test_a_name_holding_a_nul_is_a_400_naming_the_path(api):
    for path in ["/v1/api/datasets/res%00ervo/cases", "/v1/api/traces/run%00x", "/v1/api/experiments/v%001"]:
        response = api.get(path)
        assert response.status_code == 400, path
        assert response.json()["errors"] == [
            {"field": "path", "message": "must not contain the NUL character (\\u0000)"}
        ]
