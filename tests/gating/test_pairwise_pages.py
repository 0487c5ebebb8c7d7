"""Pages of pairwise review and the compare page's field diffs and sort by drop."""

import pytest
from django.test import Client

from datasets.models import Dataset, GoldenCase
from scoring.models import PairwiseJudgement
from tests.gating.test_gate_pages import _gate, _page, _row, _upload, desk_create
from tests.scoring.pairwise_data import larder_create
from web.pages.compare import scorers_by_drop

PAIRWISE = "/p/acme/experiments/pairwise/?base=v1&candidate=v2"


def _client(user):
    client = Client()
    client.force_login(user)
    return client


def _judge(client, case_name, verdict):
    case = GoldenCase.objects.get(dataset__name="larder", name=case_name)
    return client.post(PAIRWISE, {"case_id": case.pk, "verdict": verdict})


def test_the_review_page_shows_both_answers_side_by_side_and_what_changed(actors):
    larder_create(actors)
    html = _client(actors.bob).get(PAIRWISE).content.decode()
    assert "Case 1:" in html and ">bread</a>" in html  # the first case not judged, by name
    answers = html[html.index('class="answers pairwise-answers"') :]
    assert answers.index('href="/p/acme/runs/v1-bread/"') < answers.index('href="/p/acme/runs/v2-bread/"')
    assert "<code>$.items[0].qty: 3 → 4</code>" in html
    assert "<code>$.qty: 3 → 4</code>" in html  # the order call's arguments
    for key, verdict in (("1", "worse"), ("2", "tie"), ("3", "better")):
        assert f'name="verdict" value="{verdict}" data-key="{key}"' in html
    assert "0 of 3 cases judged by you" in html


def test_a_reviewer_judges_every_case_and_the_compare_page_shows_the_figures(actors):
    larder_create(actors)
    bob = _client(actors.bob)
    response = _judge(bob, "bread", "better")
    assert response.status_code == 302 and response["Location"] == PAIRWISE
    assert ">eggs</a>" in bob.get(PAIRWISE).content.decode()  # the next case
    _judge(bob, "eggs", "better"), _judge(bob, "milk", "tie")
    done = bob.get(PAIRWISE).content.decode()
    assert 'id="pairwise-done"' in done and "3 of 3 cases judged by you" in done
    compare = bob.get("/p/acme/experiments/compare/?base=v1&candidate=v2").content.decode()
    summary = compare[compare.index('id="pairwise-title"') :]
    assert "<dt>v2 better</dt><dd>2</dd>" in summary and "<dt>Ties</dt><dd>1</dd>" in summary
    assert "<dt>Judgements</dt><dd>3</dd>" in summary
    assert '<dt>v2 win rate</dt><dd>1.000 <span class="muted">[0.342, 1.000]</span>' in summary  # 2 of 2, ties out
    assert 'href="/p/acme/experiments/pairwise/?base=v1&amp;candidate=v2"' in summary


def test_judging_a_case_again_replaces_the_judgement_and_the_page_says_so(actors):
    larder_create(actors)
    bob = _client(actors.bob)
    _judge(bob, "eggs", "better"), _judge(bob, "eggs", "worse")
    assert PairwiseJudgement.objects.get().author == "bob"
    eggs = GoldenCase.objects.get(name="eggs").pk
    html = bob.get(f"{PAIRWISE}&case={eggs}").content.decode()
    assert 'value="worse" data-key="1" aria-pressed="true"' in html and "Your judgement: Base better" in html


def test_a_bad_verdict_is_a_400_page_that_names_the_problem(actors):
    larder_create(actors)
    response = _judge(_client(actors.bob), "eggs", "maybe")
    assert response.status_code == 400 and "Unknown verdict" in response.content.decode()
    assert PairwiseJudgement.objects.count() == 0


def test_a_viewer_reads_but_cannot_judge_and_an_outsider_gets_404(actors):
    larder_create(actors)
    victor = _client(actors.victor)
    html = victor.get(PAIRWISE).content.decode()
    assert "v1-bread" in html and 'name="verdict"' not in html
    assert _judge(victor, "eggs", "better").status_code == 403
    assert _client(actors.charlie).get(PAIRWISE).status_code == 404
    assert PairwiseJudgement.objects.count() == 0


def test_the_compare_page_shows_field_diffs_of_a_changed_case(actors):
    larder_create(actors, tools={("v2", "milk"): "order_all"})
    for experiment in ("v1", "v2"):
        response = actors.api().post("/v1/api/gate", {"dataset": "larder", "experiment": experiment}, format="json")
        assert response.status_code == 200, response.content
    html = _page(actors, "/p/acme/experiments/compare/?base=v1&candidate=v2")
    diff = html[html.index('class="field-diff"') :]
    assert "<code>$.items[0].qty: 3 → 4</code>" in diff
    assert "Call 1: <code>order</code> → <code>order_all</code>" in diff and "<code>$.qty: 3 → 4</code>" in diff


def test_sorting_by_drop_puts_pass_to_fail_first_and_keeps_the_other_parameters(actors):
    desk_create(actors)
    _upload(actors, "v1", {"quote": "f", "book": "p", "cancel": "p"})
    _upload(actors, "v2", {"quote": "p", "book": "p", "cancel": "f"})
    _gate(actors, "v1"), _gate(actors, "v2")
    report = _page(actors, "/p/acme/experiments/compare/?base=v1&candidate=v2&show=all")
    assert report.index('data-case="quote"') < report.index('data-case="book"') < report.index('data-case="cancel"')
    by_drop = _page(actors, "/p/acme/experiments/compare/?base=v1&candidate=v2&show=all&sort=drop")
    assert by_drop.index('data-case="cancel"') < by_drop.index('data-case="book"') < by_drop.index('data-case="quote"')
    assert 'href="?base=v1&amp;candidate=v2&amp;show=all&amp;sort=drop" class="current"' in by_drop
    assert 'href="?base=v1&amp;candidate=v2&amp;show=changed&amp;sort=drop#cases"' in by_drop  # filters keep it
    assert "pass → fail" in _row(by_drop, "cancel")


def test_pages_of_cases_sorted_by_drop_keep_the_sort(actors):
    dataset = Dataset.objects.create(project=actors.acme, name="desk")
    names = [f"case-{i:03d}" for i in range(52)]
    GoldenCase.objects.bulk_create(
        GoldenCase(dataset=dataset, name=n, expectations={"expected_tools": ["quote_room"]}) for n in names
    )
    _upload(actors, "v1", dict.fromkeys(names, "p"))
    _upload(actors, "v2", {n: "f" if n >= "case-050" else "p" for n in names})
    _gate(actors, "v1"), _gate(actors, "v2")
    first = _page(actors, "/p/acme/experiments/compare/?base=v1&candidate=v2&show=all&sort=drop")
    assert first.index('data-case="case-050"') < first.index('data-case="case-000"')
    assert "?base=v1&amp;candidate=v2&amp;show=all&amp;sort=drop&amp;page=2" in first
    second = _page(actors, "/p/acme/experiments/compare/?base=v1&candidate=v2&show=all&sort=drop&page=2")
    assert second.count('class="case-row"') == 2 and 'data-case="case-050"' not in second


def test_scorers_sorted_by_drop_put_the_largest_drop_first_and_rows_without_a_difference_last():
    rows = [
        {"scorer": "a", "diff": 0.1},
        {"scorer": "b", "diff": None},
        {"scorer": "c", "diff": -0.5},
        {"scorer": "d", "diff": -0.1},
    ]
    assert [r["scorer"] for r in scorers_by_drop(rows)] == ["c", "d", "a", "b"]


@pytest.mark.parametrize("path", ["/p/acme/experiments/pairwise/", "/p/acme/experiments/pairwise/?base=v1"])
def test_without_both_experiments_the_review_page_sends_to_compare(actors, path):
    response = _client(actors.bob).get(path)
    assert response.status_code == 302 and response["Location"] == "/p/acme/experiments/compare/"


def test_the_gate_run_page_sorts_its_comparison_with_the_baseline_by_drop(actors):
    from gating.models import GatePolicy

    larder = larder_create(actors, tools={("v2", "milk"): "order_all", ("v2", "eggs"): "order_all"})
    GatePolicy.objects.create(dataset=larder, scorers=["answered"], min_pass_rate=0.0)
    api = actors.api()
    assert (
        api.post(
            "/v1/api/gate", {"dataset": "larder", "experiment": "v1", "set_baseline": True}, format="json"
        ).status_code
        == 200
    )
    gate_run_id = api.post("/v1/api/gate", {"dataset": "larder", "experiment": "v2"}, format="json").json()[
        "gate_run_id"
    ]
    html = _page(actors, f"/p/acme/gate-runs/{gate_run_id}/?show=all&sort=drop")
    table = html[html.index('id="baseline"') :]
    assert table.index("<td>tool_choice</td>") < table.index("<td>answered</td>")
    assert 'href="?show=all&amp;sort=drop#baseline" class="current"' in table
    assert 'href="?show=failing&amp;sort=drop#cases"' in html  # the filters keep the sort
    report = _page(actors, f"/p/acme/gate-runs/{gate_run_id}/?show=all")
    assert 'href="?show=all&amp;sort=report#baseline" class="current"' in report
    rows = report[report.index('id="baseline"') :]
    assert rows.index("<td>answered</td>") < rows.index("<td>tool_choice</td>")  # the report's order
