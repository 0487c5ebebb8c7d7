"""The gate run page: trials per case, flaky and quarantined cases, every mismatch, filters and pages."""

import pytest
from django.test import Client

from datasets.models import Dataset, GoldenCase
from gating.models import GatePolicy
from tests.factories import run_payload
from web.pages.evidence import check_evidence

GOOD = [{"span_id": "t", "kind": "tool", "name": "quote_room", "input": {"room": "Focus"}, "output": {"total": 75}}]
BAD = [{"span_id": "t", "kind": "tool", "name": "book_room", "input": {"room": "Focus"}}]


def desk_create(actors):
    """The dataset "desk" with three cases that expect one call of quote_room."""
    dataset = Dataset.objects.create(project=actors.acme, name="desk")
    for name in ("quote", "book", "cancel"):
        GoldenCase.objects.create(dataset=dataset, name=name, expectations={"expected_tools": ["quote_room"]})
    return dataset


@pytest.fixture
def desk(actors):
    return desk_create(actors)


def _upload(actors, experiment, outcomes):
    """outcomes: {case: "ppf"}, one letter per trial (p passes, f fails)."""
    batch = [
        run_payload(
            f"{experiment}-{case}-{i}", dataset="desk", case=case, experiment=experiment, trial=i,
            spans=GOOD if letter == "p" else BAD, started_at=f"2026-11-30T10:00:{i:02d}Z",
        )
        for case, letters in outcomes.items()
        for i, letter in enumerate(letters, start=1)
    ]  # fmt: skip
    assert actors.api().post("/v1/api/traces", {"traces": batch}, format="json").status_code == 201


def _gate(actors, experiment):
    response = actors.api().post("/v1/api/gate", {"dataset": "desk", "experiment": experiment}, format="json")
    assert response.status_code == 200, response.content
    return response.json()["gate_run_id"]


def _page(actors, path):
    client = Client()
    client.force_login(actors.victor)
    response = client.get(path)
    assert response.status_code == 200, path
    return response.content.decode()


def _row(html, case):
    start = html.index(f'data-case="{case}"')
    return html[start : html.index("</tr>", start)]


def test_each_case_shows_its_trials_passed_of_run_and_a_flaky_badge(actors, desk):
    GatePolicy.objects.create(dataset=desk, trials=3)
    _upload(actors, "v1", {"quote": "ppp", "book": "pfp", "cancel": "ppp"})
    html = _page(actors, f"/p/acme/gate-runs/{_gate(actors, 'v1')}/")
    book = _row(html, "book")
    assert "2/3 passed" in book and "flaky" in book
    assert book.count('class="dot ') == 3 and 'href="/p/acme/runs/v1-book-2/"' in book
    assert "pass^3" in html and "Flaky (1)" in html
    assert 'data-case="quote"' not in html  # the failing filter is the default


def test_a_quarantined_case_is_listed_under_its_own_filter_not_among_the_failing(actors, desk):
    desk.cases.filter(name="book").update(quarantined=True, quarantine_reason="flaky booking API")
    _upload(actors, "v1", {"quote": "p", "book": "f", "cancel": "p"})
    gate_run_id = _gate(actors, "v1")
    failing = _page(actors, f"/p/acme/gate-runs/{gate_run_id}/?show=failing")
    assert 'data-case="book"' not in failing and "No failing case" in failing
    quarantined = _page(actors, f"/p/acme/gate-runs/{gate_run_id}/?show=quarantined")
    assert "quarantined</span>" in _row(quarantined, "book")


def test_expected_and_actual_tools_are_shown_side_by_side(actors, desk):
    _upload(actors, "v1", {"quote": "f", "book": "p", "cancel": "p"})
    quote = _row(_page(actors, f"/p/acme/gate-runs/{_gate(actors, 'v1')}/"), "quote")
    assert 'class="diff"' in quote
    assert quote.index("quote_room") < quote.index("book_room")  # expected first, then actual


def test_every_mismatch_of_a_check_is_listed_not_only_the_first():
    check = {
        "scorer": "tool_output",
        "status": "failed",
        "reason": "quote_room result total: expected 75, got 80 (and 1 more)",
        "detail": {
            "mismatches": [
                {"field": "total", "expected": 75, "actual": 80},
                {"field": "currency", "expected": "EUR", "missing": True},
            ]
        },
    }
    assert check_evidence(check)["lines"] == [
        "total: expected 75, got 80",
        "currency: missing, expected 'EUR'",
    ]


def test_cases_are_paged_fifty_at_a_time_keeping_the_filter(actors):
    dataset = Dataset.objects.create(project=actors.acme, name="desk")
    names = [f"case-{i:03d}" for i in range(60)]
    GoldenCase.objects.bulk_create(
        GoldenCase(dataset=dataset, name=n, expectations={"expected_tools": ["quote_room"]}) for n in names
    )
    _upload(actors, "v1", dict.fromkeys(names, "f"))
    gate_run_id = _gate(actors, "v1")
    first = _page(actors, f"/p/acme/gate-runs/{gate_run_id}/?show=failing")
    assert first.count('class="case-row"') == 50 and "Page 1 of 2" in first
    assert "?show=failing&amp;page=2" in first
    second = _page(actors, f"/p/acme/gate-runs/{gate_run_id}/?show=failing&page=2")
    assert second.count('class="case-row"') == 10
    assert _page(actors, f"/p/acme/gate-runs/{gate_run_id}/?show=nonsense&page=zz").count('class="case-row"') == 50
