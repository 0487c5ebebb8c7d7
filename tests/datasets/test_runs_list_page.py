"""The runs list for triage: score chips with counts, "not scored", the total, sorting, paging."""

import pytest
from django.test import Client

from tests.factories import run_payload


@pytest.fixture
def runs(actors):
    batch = [
        run_payload("fast", latency_ms=100, cost_cents=3, started_at="2026-11-30T10:00:01Z"),
        run_payload("slow", latency_ms=9000, cost_cents=1, started_at="2026-11-30T10:00:02Z", output=None),
        run_payload("unscored", latency_ms=500, cost_cents=2, started_at="2026-11-30T10:00:03Z"),
    ]
    assert actors.api().post("/v1/api/traces", {"traces": batch}, format="json").status_code == 201
    scored = actors.api().post(
        "/v1/api/score", {"scorers": ["answered", "no_errors", "exact_match"], "trace_ids": ["fast", "slow"]},
        format="json",
    )  # fmt: skip
    assert scored.status_code == 200, scored.content
    return actors


def _html(actors, path):
    client = Client()
    client.force_login(actors.bob)
    response = client.get(path)
    assert response.status_code == 200
    return response.content.decode()


def _row(html, trace_id):
    start = html.index(f'value="{trace_id}"')
    return html[start : html.index("</tr>", start)]


def test_each_run_shows_its_passed_failed_and_abstained_counts_or_not_scored(runs):
    html = _html(runs, "/p/acme/runs/")
    assert "2 passed</span>" in _row(html, "fast") and "1 abstained</span>" in _row(html, "fast")
    assert "1 failed</span>" in _row(html, "slow")  # no answer: answered fails
    assert "not scored" in _row(html, "unscored") and "passed</span>" not in _row(html, "unscored")


def test_the_list_says_how_many_runs_match_the_filter(runs):
    assert '<strong data-field="total">3</strong> runs.' in _html(runs, "/p/acme/runs/")
    filtered = _html(runs, "/p/acme/runs/?failed=any")
    assert '<strong data-field="total">1</strong> run match these filters' in filtered


def test_runs_sort_by_latency_cost_and_failures(runs):
    def order(sort):
        html = _html(runs, f"/p/acme/runs/?sort={sort}")
        return sorted(("fast", "slow", "unscored"), key=lambda t: html.index(f'value="{t}"'))

    assert order("started") == ["unscored", "slow", "fast"]
    assert order("latency") == ["slow", "unscored", "fast"]
    assert order("cost") == ["fast", "unscored", "slow"]
    assert order("failures")[0] == "slow"
    assert order("nonsense") == ["unscored", "slow", "fast"]


def test_a_sorted_list_pages_by_number_keeping_filter_and_sort(actors):
    batch = [run_payload(f"r{i:03d}", latency_ms=i) for i in range(55)]
    assert actors.api().post("/v1/api/traces", {"traces": batch}, format="json").status_code == 201
    first = _html(actors, "/p/acme/runs/?sort=latency&status=ok")
    assert first.count('type="checkbox" name="trace_ids"') == 50 and "Page 1 of 2" in first
    assert "?sort=latency&amp;status=ok&amp;page=2" in first
    second = _html(actors, "/p/acme/runs/?sort=latency&status=ok&page=2")
    assert second.count('type="checkbox" name="trace_ids"') == 5 and 'value="r000"' in second


def test_the_scorer_filters_are_choices_and_keep_an_unlisted_id_from_a_shared_link(runs):
    html = _html(runs, "/p/acme/runs/?failed=answered")
    select = html[html.index('name="failed"') :]
    select = select[: select.index("</select>")]
    assert '<option value="any">any scorer</option>' in select and '<option value="tool_choice">' in select
    assert '<option value="answered" selected>' in select
    assert '<strong data-field="total">1</strong> run match' in html
    kept = _html(runs, "/p/acme/runs/?abstained=retired_scorer")
    assert '<option value="retired_scorer" selected>' in kept
