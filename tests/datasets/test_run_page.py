"""The run page: its verdict from its checks in the header, a timeline of its spans, each abstention once."""

import pytest
from django.test import Client

from tests.factories import run_payload

SPANS = [
    {"span_id": "m", "kind": "llm", "name": "model", "started_at": "2026-11-30T10:00:00Z", "latency_ms": 400},
    {
        "span_id": "t", "parent_id": "m", "kind": "tool", "name": "quote_room", "input": {"room": "Focus"},
        "started_at": "2026-11-30T10:00:00.600Z", "latency_ms": 400,
    },
    {"span_id": "u", "kind": "other", "name": "untimed"},
]  # fmt: skip


@pytest.fixture
def run(actors):
    payload = run_payload("r1", output=None, status="ok", spans=SPANS)
    assert actors.api().post("/v1/api/traces", payload, format="json").status_code == 201
    return actors


def _html(actors, path="/p/acme/runs/r1/"):
    client = Client()
    client.force_login(actors.bob)
    response = client.get(path)
    assert response.status_code == 200
    return response.content.decode()


def _score(actors, scorers):
    response = actors.api().post("/v1/api/score", {"scorers": scorers, "trace_ids": ["r1"]}, format="json")
    assert response.status_code == 200, response.content


def test_the_header_says_not_scored_then_the_failed_checks_not_the_transport_status(run):
    assert 'data-field="verdict">not scored</span>' in _html(run)
    _score(run, ["answered", "no_errors"])
    html = _html(run)
    assert 'class="badge fail" data-field="verdict">1 check failed</span>' in html
    assert "Failed: answered" in html


def test_the_timeline_places_each_timed_span_by_start_and_duration(run):
    html = _html(run)
    assert "Timeline: 1000 ms" in html and "1 span without a start time left out" in html
    assert 'style="left: 0.00%; width: 40.00%"' in html  # the model: 0..400 of 1000 ms
    assert 'style="left: 60.00%; width: 40.00%"' in html  # the tool: 600..1000 ms


def test_a_scorer_that_abstained_twice_is_listed_once_with_the_count(run):
    _score(run, ["exact_match"])
    _score(run, ["exact_match"])
    html = _html(run)
    table = html[html.index('class="abstentions"') :]
    table = table[: table.index("</table>")]
    assert table.count("<tr>") == 2 and "(2 times, newest shown)" in table
