"""A gate with more cases than its answer carries: the answer holds the failures first and
``cases_next``; ``GET gate-runs/{id}/cases`` serves the rest by cursor, every case once."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from datasets.models import Dataset, GoldenCase
from evalsite.scopes import FEEDBACK, GATE, INGEST
from tests.factories import run_payload

CASES = 12
FAILING = {2, 5, 9}  # indexes of the cases whose run calls the wrong tool
EXPECT = {"expected_tools": ["quote_room"]}


@pytest.fixture
def gate(actors, settings):
    """A 12-case gate whose answer carries 4 cases; cases 2, 5 and 9 fail, case 11 is quarantined."""
    settings.EVALSITE_GATE_ANSWER_CASES = 4
    dataset = Dataset.objects.create(project=actors.acme, name="big")
    for i in range(CASES):
        GoldenCase.objects.create(
            dataset=dataset, name=f"case_{i:02d}", input=f"q{i}", expectations=EXPECT, quarantined=i == 11,
            quarantine_reason="flaky vendor" if i == 11 else "",
        )  # fmt: skip
    runs = [
        run_payload(f"v1-{i}", dataset="big", case=f"case_{i:02d}", experiment="v1", **_tool(i)) for i in range(CASES)
    ]
    assert actors.api().post("/v1/api/traces", {"traces": runs}, format="json").status_code == 201
    response = actors.api().post("/v1/api/gate", {"dataset": "big", "experiment": "v1"}, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def _tool(i):
    name = "book_room" if i in FAILING else "quote_room"
    return {"spans": [{"span_id": "t", "kind": "tool", "name": name, "input": {}, "output": {}}]}


def _follow(api, link):
    names = []
    while link:
        response = api.get(link)
        assert response.status_code == 200, response.content
        names += [case["name"] for case in response.json()["results"]]
        link = response.json()["next"]
    return names


def test_the_answer_carries_the_counts_and_the_failures_first(gate):
    assert (gate["verdict"], gate["passed_cases"], gate["total_cases"]) == ("FAIL", 8, 11)
    assert gate["blocked_by"]
    names = [case["name"] for case in gate["cases"]]
    # The three failures are chosen first, then the first passing case; listed in report order.
    assert names == ["case_00", "case_02", "case_05", "case_09"]
    assert gate["cases_next"].startswith("http://testserver/v1/api/gate-runs/")
    assert [case["name"] for case in gate["quarantined"]] == ["case_11"] and gate["quarantined_next"] is None


def test_following_cases_next_gives_every_other_gating_case_once(actors, gate):
    rest = _follow(actors.api(), gate["cases_next"])
    shown = [case["name"] for case in gate["cases"]]
    assert rest == ["case_01", "case_03", "case_04", "case_06", "case_07", "case_08", "case_10"]
    assert sorted(shown + rest) == [f"case_{i:02d}" for i in range(11)]


def test_the_stored_gate_run_answers_the_same_page(actors, gate):
    stored = actors.api().get(f"/v1/api/gate-runs/{gate['gate_run_id']}").json()
    assert [c["name"] for c in stored["cases"]] == [c["name"] for c in gate["cases"]]
    assert stored["cases_next"] == gate["cases_next"]
    assert stored["cases"][0] == gate["cases"][0]


def test_pages_come_failures_first_then_by_case(actors, gate):
    api = actors.api()
    first = api.get(f"/v1/api/gate-runs/{gate['gate_run_id']}/cases", {"page_size": 5}).json()
    assert [c["name"] for c in first["results"]] == ["case_02", "case_05", "case_09", "case_00", "case_01"]
    assert "page_size=5" in first["next"]
    assert _follow(api, first["next"]) == [f"case_{i:02d}" for i in (3, 4, 6, 7, 8, 10, 11)]
    by_position = _follow(api, f"/v1/api/gate-runs/{gate['gate_run_id']}/cases?order=position&page_size=3")
    assert by_position == [f"case_{i:02d}" for i in range(CASES)]


def test_a_page_carries_the_answers_case_shape_with_its_run_link(actors, gate):
    page = actors.api().get(f"/v1/api/gate-runs/{gate['gate_run_id']}/cases", {"passed": "false"}).json()
    assert page["next"] is None
    case = next(c for c in page["results"] if c["name"] == "case_02")
    assert case == next(c for c in gate["cases"] if c["name"] == "case_02")
    assert case["run_url"].endswith("/p/acme/runs/v1-2/") and case["failed_checks"] == ["tool_choice"]


def test_a_page_is_one_query_after_the_gate_run(actors, gate):
    api = actors.api()
    url = f"/v1/api/gate-runs/{gate['gate_run_id']}/cases?page_size=2"
    with CaptureQueriesContext(connection) as small:
        assert api.get(url).status_code == 200
    with CaptureQueriesContext(connection) as large:
        assert api.get(url.replace("=2", "=50")).status_code == 200
    assert len(small) == len(large)


@pytest.mark.parametrize("cursor", ["nope", "ZzE6ZmFpbHVyZXM6MQ", "ZzE6Zm9vOjE6MToz", "ZzE6ZmFpbHVyZXM6MTpBOjM"])
def test_a_bad_cursor_is_a_400_naming_it(actors, gate, cursor):
    response = actors.api().get(f"/v1/api/gate-runs/{gate['gate_run_id']}/cases", {"cursor": cursor})
    assert response.status_code == 400, response.content
    assert response.json()["errors"][0]["field"] == "cursor"


def test_a_cursor_of_the_other_order_is_a_400_saying_so(actors, gate):
    cursor = gate["cases_next"].split("cursor=")[1]
    response = actors.api().get(f"/v1/api/gate-runs/{gate['gate_run_id']}/cases?order=position&cursor={cursor}")
    assert response.status_code == 400
    assert response.json()["errors"] == [
        {"field": "cursor", "message": "is a cursor of order=failures, not order=position"}
    ]


def test_a_bad_page_size_is_a_400_naming_it(actors, gate):
    response = actors.api().get(f"/v1/api/gate-runs/{gate['gate_run_id']}/cases", {"page_size": 0})
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "page_size"


def test_an_outsider_gets_a_404(actors, gate):
    assert actors.outsider_api().get(gate["cases_next"]).status_code == 404


def test_the_pages_need_the_scopes_a_gate_run_needs(actors, gate):
    for scopes in ([GATE], [INGEST], [FEEDBACK]):
        api = actors.ci_api(scopes)
        run = api.get(f"/v1/api/gate-runs/{gate['gate_run_id']}").status_code
        assert api.get(gate["cases_next"]).status_code == run, scopes
