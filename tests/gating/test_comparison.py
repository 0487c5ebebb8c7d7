import json
import math

import pytest
from django.db import connection

from datasets.models import Dataset, Experiment, GoldenCase, Trace
from gating.comparison import experiments_compare
from scoring.models import Abstention, Score
from scoring.passes.summaries import summaries_build
from scoring.score_configs import score_configs_store
from tests.factories import trace_create


@pytest.fixture(autouse=True, params=["scores", "summaries"])
def read_from(request, monkeypatch):
    """Every test twice on PostgreSQL: compare reading the scores, then its summaries."""
    if request.param == "scores":
        return
    if connection.vendor != "postgresql":
        pytest.skip("summaries are kept on PostgreSQL (DATABASE_URL)")
    from gating import comparison

    read = comparison.summaries_stats

    def built_then_read(experiment_ids):
        summaries_build(experiment_ids)
        found = read(experiment_ids)
        assert set(found) == set(experiment_ids)
        return found

    monkeypatch.setattr(comparison, "summaries_stats", built_then_read)


def _scores(actors, experiment, scorer, passes, fails, *, cases=None, prefix=None):
    """Store one run and one score per outcome: ``passes`` 1.0s then ``fails`` 0.0s."""
    prefix = prefix or f"{experiment.name}-{scorer}"
    for i, passed in enumerate([True] * passes + [False] * fails):
        case = cases[i] if cases else None
        trace = trace_create(actors.acme, f"{prefix}-{i}", experiment=experiment.name, case=case.pk if case else None)
        Score.objects.create(
            project=actors.acme, trace=trace, scorer=scorer, config_hash="h", value=1.0 if passed else 0.0,
            passed=passed, experiment=trace.experiment, case=case,
        )  # fmt: skip


@pytest.fixture
def two(actors):
    base = Experiment.objects.create(project=actors.acme, name="v1")
    candidate = Experiment.objects.create(project=actors.acme, name="v2")
    return base, candidate


def test_it_compares_means_with_each_sides_n_and_a_confidence_interval(actors, two):
    base, candidate = two
    _scores(actors, base, "tool_choice", 18, 2)
    _scores(actors, candidate, "tool_choice", 14, 6)
    row = experiments_compare(base=base, candidate=candidate)["scorers"][0]
    assert row["scorer"] == "tool_choice"
    assert row["base"] == {"mean": pytest.approx(0.9), "n": 20, "abstained": 0}
    assert row["candidate"] == {"mean": pytest.approx(0.7), "n": 20, "abstained": 0}
    assert row["diff"] == pytest.approx(-0.2)
    assert row["decidable"] and not row["regressed"]  # the interval reaches above zero: not shown to be worse
    half = 1.959963984540054 * math.sqrt((0.09 * 20 / 19) / 20 + (0.21 * 20 / 19) / 20)
    assert row["ci95"] == [pytest.approx(-0.2 - half), pytest.approx(-0.2 + half)]


def test_under_twenty_on_either_side_is_undecidable_and_never_a_regression(actors, two):
    base, candidate = two
    _scores(actors, base, "answered", 20, 0)
    _scores(actors, candidate, "answered", 1, 3)
    row = experiments_compare(base=base, candidate=candidate)["scorers"][0]
    assert row["diff"] == pytest.approx(-0.75)
    assert (row["decidable"], row["regressed"]) == (False, False)


def test_it_does_not_call_a_drop_a_regression_when_its_interval_reaches_zero(actors, two):
    base, candidate = two
    _scores(actors, base, "contains", 20, 0)
    _scores(actors, candidate, "contains", 19, 1)
    row = experiments_compare(base=base, candidate=candidate, tolerance=0.0)["scorers"][0]
    assert row["decidable"] and row["diff"] == pytest.approx(-0.05) and row["ci95"][1] > 0
    assert row["regressed"] is False


def test_it_calls_a_drop_a_regression_only_when_the_interval_is_wholly_below_the_tolerance(actors, two):
    base, candidate = two
    _scores(actors, base, "contains", 20, 0)
    _scores(actors, candidate, "contains", 10, 10)
    row = experiments_compare(base=base, candidate=candidate, tolerance=0.0)["scorers"][0]
    assert row["ci95"][1] == pytest.approx(-0.5 + 1.959963984540054 * math.sqrt(0.25 * 20 / 19 / 20))
    assert row["regressed"] is True
    assert experiments_compare(base=base, candidate=candidate, tolerance=0.3)["scorers"][0]["regressed"] is False


def test_abstentions_are_counted_beside_the_means(actors, two):
    base, candidate = two
    _scores(actors, base, "exact_match", 2, 0)
    _scores(actors, candidate, "exact_match", 1, 0)
    for i in range(3):
        trace = trace_create(actors.acme, f"abst-{i}", experiment="v2")
        Abstention.objects.create(
            project=actors.acme, trace=trace, scorer="exact_match", reason="no_expected_output", experiment=candidate
        )
    row = experiments_compare(base=base, candidate=candidate)["scorers"][0]
    assert row["candidate"] == {"mean": 1.0, "n": 1, "abstained": 3}


def test_stale_scores_are_left_out(actors, two):
    base, candidate = two
    _scores(actors, base, "answered", 3, 0)
    _scores(actors, candidate, "answered", 3, 0)
    Score.objects.filter(experiment=candidate).update(value=0.0, passed=False)
    Trace.objects.filter(experiment=candidate).update(revision=2)  # the runs changed since
    row = experiments_compare(base=base, candidate=candidate)["scorers"][0]
    assert row["candidate"]["n"] == 0 and row["diff"] is None


def test_it_lists_the_cases_that_flipped_each_way(actors, two):
    base, candidate = two
    dataset = Dataset.objects.create(project=actors.acme, name="reservo")
    cases = [GoldenCase.objects.create(dataset=dataset, name=f"case_{i}") for i in range(3)]
    _scores(actors, base, "tool_choice", 2, 1, cases=cases)  # case_0, case_1 pass; case_2 fails
    _scores(actors, candidate, "tool_choice", 1, 0, cases=[cases[2]], prefix="v2-fixed")  # case_2 now passes
    _scores(actors, candidate, "tool_choice", 0, 1, cases=[cases[0]], prefix="v2-broke")  # case_0 now fails
    flipped = experiments_compare(base=base, candidate=candidate)["flipped"]
    assert [(f["case"], f["scorer"]) for f in flipped["pass_to_fail"]] == [("case_0", "tool_choice")]
    assert [(f["case"], f["candidate_trace_id"]) for f in flipped["fail_to_pass"]] == [("case_2", "v2-fixed-0")]
    assert flipped["pass_to_fail"][0]["base_trace_id"] == Trace.objects.get(case=cases[0], experiment=base).trace_id
    assert (flipped["pass_to_fail_count"], flipped["fail_to_pass_count"]) == (1, 1)


def test_flips_past_the_shown_ones_are_counted_and_shown_in_case_then_scorer_order(actors, two, monkeypatch):
    monkeypatch.setattr("gating.comparison.FLIPS_SHOWN", 2)
    base, candidate = two
    dataset = Dataset.objects.create(project=actors.acme, name="reservo")
    cases = [GoldenCase.objects.create(dataset=dataset, name=f"case_{i}") for i in range(3)]
    for scorer in ("tool_choice", "answered", "Z_check"):
        _scores(actors, base, scorer, 3, 0, cases=cases)
        _scores(actors, candidate, scorer, 0, 3, cases=cases)
    flipped = experiments_compare(base=base, candidate=candidate)["flipped"]
    assert [(f["case"], f["scorer"]) for f in flipped["pass_to_fail"]] == [
        ("case_0", "Z_check"),
        ("case_0", "answered"),
    ]
    assert (flipped["pass_to_fail_count"], flipped["fail_to_pass_count"]) == (9, 0)
    assert flipped["fail_to_pass"] == []


def test_the_compare_endpoint_answers_and_isolates(actors, two):
    base, candidate = two
    _scores(actors, base, "answered", 1, 0)
    _scores(actors, candidate, "answered", 0, 1)
    response = actors.api().get("/v1/api/experiments/compare?base=v1&candidate=v2&scorers=answered")
    assert response.status_code == 200
    assert response.json()["scorers"][0]["diff"] == -1.0
    assert actors.outsider_api().get("/v1/api/experiments/compare?base=v1&candidate=v2").status_code == 404
    missing = actors.api().get("/v1/api/experiments/compare?base=v1")
    assert missing.status_code == 400 and missing.json()["errors"][0]["field"] == "candidate"


def test_a_scorer_run_with_two_configs_over_the_same_runs_is_two_rows(actors, two):
    base, candidate = two
    for experiment in (base, candidate):
        for i in range(3):
            run = trace_create(actors.acme, f"{experiment.name}-{i}", experiment=experiment.name)
            for config, passed in (({}, True), ({"schema": {"type": "object"}}, False)):
                score_configs_store(project_id=actors.acme.pk, configs={str(sorted(config)): json.dumps(config)})
                Score.objects.create(
                    project=actors.acme, trace=run, experiment=experiment, scorer="json_valid",
                    config_hash=str(sorted(config)), value=float(passed), passed=passed,
                )  # fmt: skip
    rows = experiments_compare(base=base, candidate=candidate)["scorers"]
    by_config = {str(r["config"]): (r["scorer"], r["base"]["n"], r["base"]["mean"]) for r in rows}
    assert by_config == {
        "{}": ("json_valid", 3, 1.0),
        "{'schema': {'type': 'object'}}": ("json_valid", 3, 0.0),
    }
