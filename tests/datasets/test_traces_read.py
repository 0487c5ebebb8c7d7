from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.factories import run_payload, trace_create


def test_it_lists_runs_newest_first_with_cursor_pages(actors):
    for hour in range(5):
        trace_create(actors.acme, f"r{hour}", started_at=f"2026-11-30T1{hour}:00:00Z")
    api = actors.api()
    first = api.get("/v1/api/traces?page_size=2").json()
    assert [t["trace_id"] for t in first["results"]] == ["r4", "r3"]
    second = api.get(first["next"]).json()
    assert [t["trace_id"] for t in second["results"]] == ["r2", "r1"]
    third = api.get(second["next"]).json()
    assert [t["trace_id"] for t in third["results"]] == ["r0"]
    assert third["next"] is None


def test_it_filters_runs(actors):
    trace_create(
        actors.acme, "a", experiment="v1", status="ok", started_at="2026-11-01T00:00:00Z", output="room Focus booked"
    )
    trace_create(actors.acme, "b", experiment="v2", status="error", started_at="2026-11-15T00:00:00Z")
    trace_create(actors.acme, "c", experiment="v2", status="ok", started_at="2026-11-30T00:00:00Z")
    api = actors.api()

    def ids(query):
        response = api.get("/v1/api/traces?" + query)
        assert response.status_code == 200, response.content
        return sorted(t["trace_id"] for t in response.json()["results"])

    assert ids("experiment=v2") == ["b", "c"]
    assert ids("status=error") == ["b"]
    assert ids("from=2026-11-10T00:00:00Z") == ["b", "c"]
    assert ids("to=2026-11-15T00:00:00Z") == ["a"]
    assert ids("from=2026-11-10T00:00:00Z&to=2026-11-20T00:00:00Z") == ["b"]
    assert ids("text=BOOKED") == ["a"]
    assert ids("experiment=v2&status=ok") == ["c"]


def test_it_names_a_bad_filter(actors):
    response = actors.api().get("/v1/api/traces?status=fine&from=yesterday")
    assert response.status_code == 400
    fields = {e["field"] for e in response.json()["errors"]}
    assert fields == {"status", "from"}


def test_the_list_costs_a_fixed_number_of_queries(actors):
    for i in range(3):
        trace_create(actors.acme, f"q{i}", experiment=f"v{i}")
    api = actors.api()
    api.get("/v1/api/traces")  # the first request of a minute also records the key's last use
    with CaptureQueriesContext(connection) as few:
        assert api.get("/v1/api/traces").status_code == 200
    for i in range(3, 30):
        trace_create(actors.acme, f"q{i}", experiment=f"v{i}")
    with CaptureQueriesContext(connection) as many:
        assert len(api.get("/v1/api/traces").json()["results"]) == 30
    assert len(many) == len(few)


def test_it_shows_one_run_with_its_spans_in_tree_order(actors):
    spans = [
        {
            "span_id": "tool-2",
            "parent_id": "agent",
            "kind": "tool",
            "name": "book_room",
            "started_at": "2026-11-30T10:00:02Z",
        },
        {"span_id": "agent", "kind": "agent", "name": "reservo", "started_at": "2026-11-30T10:00:00Z"},
        {
            "span_id": "tool-1",
            "parent_id": "agent",
            "kind": "tool",
            "name": "quote_room",
            "started_at": "2026-11-30T10:00:01Z",
        },
        {
            "span_id": "llm",
            "parent_id": "tool-1",
            "kind": "llm",
            "name": "model",
            "started_at": "2026-11-30T10:00:01.5Z",
        },
    ]
    trace_create(actors.acme, "tree", spans=spans)
    body = actors.api().get("/v1/api/traces/tree").json()
    assert [(s["span_id"], s["depth"]) for s in body["spans"]] == [
        ("agent", 0),
        ("tool-1", 1),
        ("llm", 2),
        ("tool-2", 1),
    ]
    assert body["spans"][1]["parent_id"] == "agent"


def test_a_trace_id_may_contain_slashes(actors):
    actors.api().post("/v1/api/traces", run_payload("ci/main/42"), format="json")
    assert actors.api().get("/v1/api/traces/ci/main/42").json()["trace_id"] == "ci/main/42"


def test_an_outsider_gets_404_for_a_run_and_sees_none_in_lists(actors):
    trace_create(actors.acme, "private-run")
    outsider = actors.outsider_api()
    response = outsider.get("/v1/api/traces/private-run")
    assert response.status_code == 404
    assert response["Content-Type"] == "application/problem+json"
    assert outsider.get("/v1/api/traces").json()["results"] == []


def test_an_unknown_run_is_404(actors):
    assert actors.api().get("/v1/api/traces/never-sent").status_code == 404


def test_a_case_id_no_database_can_hold_is_a_400_naming_it(actors):
    response = actors.api().get("/v1/api/traces?case=143741418184078867646015198524866560")
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "case"
