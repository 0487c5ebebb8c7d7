"""Experiment and gate pages, on the demo's real data (Reservo v1 baseline, v2 regressed)."""

import pytest
from django.test import Client

from lifecycle.demo import demo_data_load
from web.pages.plots import pass_rate_plot


@pytest.fixture
def demo(actors):
    return demo_data_load(project=actors.acme, user=actors.alice)


def _client(user):
    client = Client()
    client.force_login(user)
    return client


def test_the_experiments_page_lists_each_with_its_pass_rate_and_plots_them(actors, demo):
    html = _client(actors.victor).get("/p/acme/experiments/").content.decode()
    assert "<svg" in html and "polyline" in html
    assert "v1" in html and "v2" in html
    assert html.index('experiment=v2">v2</a>') < html.index('experiment=v1">v1</a>')  # newest first in the table


def test_the_gate_run_page_puts_the_failing_case_first_with_its_reasons_and_run(actors, demo):
    v2 = demo[1]
    html = _client(actors.victor).get(f"/p/acme/gate-runs/{v2.pk}/").content.decode()
    assert "FAIL" in html and "(4/5)" in html
    assert "quote_focus_basic_3h" not in html  # failing cases only, by default
    every = _client(actors.victor).get(f"/p/acme/gate-runs/{v2.pk}/?show=all").content.decode()
    assert every.index("quote_focus_pro_3h") < every.index("quote_focus_basic_3h")
    # The failed check and its reason, once: the case's reasons do not restate it.
    assert html.count("expected [&#x27;quote_room&#x27;], called [&#x27;book_room&#x27;]") == 1
    assert "<strong>tool_choice</strong>" in html
    assert 'href="/p/acme/runs/v2-quote_focus_pro_3h/"' in html


def test_the_gate_runs_page_filters_by_verdict(actors, demo):
    client = _client(actors.victor)
    failed = client.get("/p/acme/gate-runs/?verdict=FAIL").content.decode()
    assert f'href="/p/acme/gate-runs/{demo[1].pk}/"' in failed
    assert f'href="/p/acme/gate-runs/{demo[0].pk}/"' not in failed


def test_the_compare_page_shows_n_on_both_sides_and_the_decidable_flag(actors, demo):
    html = _client(actors.victor).get("/p/acme/experiments/compare/?base=v1&candidate=v2").content.decode()
    assert "tool_choice" in html
    assert '<span class="badge warn">no</span>' in html  # five runs a side: not decidable
    assert 'href="/p/acme/runs/v2-quote_focus_pro_3h/"' in html  # the flipped case links to its run


def test_outsiders_get_404_on_every_experiment_page(actors, demo):
    client = _client(actors.charlie)
    for path in (
        "/p/acme/experiments/",
        "/p/acme/experiments/compare/",
        "/p/acme/gate-runs/",
        f"/p/acme/gate-runs/{demo[0].pk}/",
    ):
        assert client.get(path).status_code == 404, path


def test_empty_states_say_what_to_do(actors):
    client = _client(actors.victor)
    assert (
        "An experiment is created the first time a run names it" in client.get("/p/acme/experiments/").content.decode()
    )
    assert "evalgate gate --dataset" in client.get("/p/acme/gate-runs/").content.decode()


def test_the_plot_places_rates_on_a_fixed_scale_and_escapes_labels():
    svg = pass_rate_plot([("<v1>", None, 1.0), ("v2", None, 0.5), ("v3", None, None)])
    assert "&lt;v1&gt;" in svg and "<v1>" not in svg
    assert svg.count("<circle") == 2
    assert pass_rate_plot([("v1", None, None)]) == ""


def test_the_gate_runs_list_names_the_baseline_the_verdict_used_as_the_detail_does(actors, demo):
    v2 = demo[1]
    assert v2.baseline is None and v2.result["baseline"]["experiment"] == "v1"  # the policy's baseline
    html = _client(actors.victor).get("/p/acme/gate-runs/").content.decode()
    row = html[html.index(f'href="/p/acme/gate-runs/{v2.pk}/"') :]
    row = row[: row.index("</tr>")]
    assert "<td>v1</td>" in row


def test_the_experiments_page_shows_the_gate_pass_rate_and_each_scorer_apart(actors, demo):
    html = _client(actors.victor).get("/p/acme/experiments/").content.decode()
    assert "Gate pass rate by experiment" in html  # the plot follows the gate, not pooled scores
    v2 = html[html.index('experiment=v2">v2</a>') :]
    assert "FAIL</span> 4/5</a></td>\n        <td>0.800</td>" in v2
    per_scorer = html[html.index('class="per-scorer"') :]
    header = per_scorer[: per_scorer.index("</thead>")]
    row = per_scorer[per_scorer.index("<tr><td>v2</td>") :]
    row = row[: row.index("</tr>")]
    cells = row.split("</td><td>")[1:]
    column = header.split("<th>").index("tool_choice</th>") - 2
    assert '<span class="error">0.800</span> <span class="muted">(5)</span>' in cells[column]


def test_a_case_page_shows_its_outcome_per_experiment_and_expected_beside_actual(actors, demo):
    case_id = demo[1].cases.get(name="quote_focus_pro_3h").case_id
    html = _client(actors.victor).get(f"/p/acme/cases/{case_id}/").content.decode()
    history = html[html.index('class="case-history"') :]
    assert history.index("<td>v2</td>") < history.index("<td>v1</td>")  # newest first
    assert 'badge fail">FAIL' in history[: history.index("<td>v1</td>")]
    diff = html[html.index("Expected and actual, v2") :]
    assert 'href="/p/acme/runs/v2-quote_focus_pro_3h/"' in diff
    assert diff.index("quote_room") < diff.index("book_room")  # expected tools, then the calls made


def test_a_case_never_gated_says_so(actors, demo):
    from datasets.models import GoldenCase

    fresh = GoldenCase.objects.create(dataset=demo[0].dataset, name="fresh")
    html = _client(actors.victor).get(f"/p/acme/cases/{fresh.pk}/").content.decode()
    assert "The gate has not run this case yet" in html
