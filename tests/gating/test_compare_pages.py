"""The compare page: the paired cases with McNemar and Wilson, both sides' trials, answers side by side."""

import pytest

from gating.models import GatePolicy
from tests.gating.test_gate_pages import _gate, _page, _row, _upload, desk_create
from web.pages.plots import difference_plot

COMPARE = "/p/acme/experiments/compare/?base=v1&candidate=v2"


@pytest.fixture
def desk(actors):
    return desk_create(actors)


def test_the_paired_section_shows_the_counts_the_p_value_and_the_intervals(actors, desk):
    _upload(actors, "v1", {"quote": "p", "book": "p", "cancel": "f"})
    _upload(actors, "v2", {"quote": "p", "book": "f", "cancel": "f"})
    _gate(actors, "v1"), _gate(actors, "v2")
    html = _page(actors, COMPARE)
    assert "<dt>Paired cases</dt><dd>3</dd>" in html
    assert '<dt>Pass → fail</dt><dd class="error">1</dd>' in html
    assert "<dt>McNemar p (exact)</dt><dd>1.0000</dd>" in html
    assert '0.667 <span class="muted">[0.208, 0.939]</span>' in html  # v1: 2 of 3, Wilson interval


def test_by_default_only_changed_cases_are_listed_with_both_answers_side_by_side(actors, desk):
    _upload(actors, "v1", {"quote": "p", "book": "p", "cancel": "f"})
    _upload(actors, "v2", {"quote": "p", "book": "f", "cancel": "f"})
    _gate(actors, "v1"), _gate(actors, "v2")
    html = _page(actors, COMPARE)
    assert 'data-case="book"' in html and 'data-case="quote"' not in html
    assert "pass → fail</span>" in _row(html, "book")
    answers = html[html.index('class="answers"') :]
    assert answers.index("quote_room") < answers.index("book_room")  # base's call, then the candidate's
    assert 'href="/p/acme/runs/v1-book-1/"' in answers and 'href="/p/acme/runs/v2-book-1/"' in answers
    assert 'data-case="quote"' in _page(actors, COMPARE + "&show=all")


def test_each_side_shows_its_trials_and_the_flaky_filter_finds_a_case_flaky_on_one_side(actors, desk):
    GatePolicy.objects.create(dataset=desk, trials=2)
    _upload(actors, "v1", {"quote": "pp", "book": "pp", "cancel": "pp"})
    _upload(actors, "v2", {"quote": "pp", "book": "pf", "cancel": "pp"})
    _gate(actors, "v1"), _gate(actors, "v2")
    flaky = _page(actors, COMPARE + "&show=flaky")
    book = _row(flaky, "book")
    assert book.count("2/2 passed") == 1 and book.count("1/2 passed") == 1 and "flaky" in book
    assert 'data-case="quote"' not in flaky


def test_without_gate_runs_the_page_says_how_to_get_paired_cases(actors, desk):
    _upload(actors, "v1", {"quote": "p"})
    _upload(actors, "v2", {"quote": "f"})
    html = _page(actors, COMPARE)
    assert "pairing needs a finished gate run of each experiment" in html
    assert "Choose a base and a candidate" in _page(actors, "/p/acme/experiments/compare/")


def test_the_difference_plot_draws_each_scorer_with_its_interval_and_marks_a_regression():
    rows = [
        {"scorer": "tool_choice", "diff": -0.4, "ci95": [-0.6, -0.2], "decidable": True, "regressed": True},
        {"scorer": "<judge>", "diff": 0.1, "ci95": None, "decidable": False, "regressed": False},
        {"scorer": "answered", "diff": None, "ci95": None, "decidable": False, "regressed": False},
    ]
    svg = difference_plot(rows)
    assert svg.count("<circle") == 2 and svg.count('class="interval') == 1
    assert 'class="diff regressed"' in svg and 'class="diff undecidable"' in svg
    assert "&lt;judge&gt;" in svg and "<judge>" not in svg
    assert difference_plot(rows[2:]) == ""
