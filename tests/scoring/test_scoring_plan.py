"""ScoringPlan: config resolved per case, hashed once per distinct config, the same hash as ever."""

import gc

import orjson

from checks.scorers import config_hash, resolve_config, run_from_payload, scorer_get
from scoring.pipeline.engine import ScoringPlan, outcomes_compute
from scoring.pipeline.loading import LoadedRun


def _run(pk, expected, expectations):
    view = run_from_payload(
        {"trace_id": f"t{pk}", "output": "the invoice is paid", "spans": [{"kind": "tool", "name": "search"}]},
        expected_output=expected,
        expectations=expectations,
    )
    key = orjson.dumps([expected, expectations], option=orjson.OPT_SORT_KEYS)
    return LoadedRun(pk=pk, view=view, experiment_id=None, case_id=pk, revision=1, case_key=key)


def test_each_run_gets_its_cases_config_and_the_hash_config_hash_gives():
    runs = [
        _run(1, "a", {"contains": "invoice", "expected_tools": ["search"]}),
        _run(2, "b", {"contains": "invoice", "expected_tools": ["search", "fetch"]}),
        _run(3, None, {"contains": "refund"}),
    ]
    scorers = [scorer_get(s) for s in ("contains", "exact_match", "tool_choice", "json_valid")]
    plan = ScoringPlan(scorers, {"exact_match": {"expected": "z"}})
    for run in runs:
        for scorer, resolved in plan.for_run(run):
            expected = resolve_config(scorer, plan.request_config.get(scorer.id), run.view)
            assert resolved.config == expected
            assert resolved.config_hash == config_hash(expected)
            assert orjson.loads(resolved.config_json) == (expected if expected is not None else {})


def test_cases_that_configure_a_scorer_alike_share_one_hashing():
    runs = [_run(pk, f"answer {pk}", {"contains": "invoice"}) for pk in range(5)]
    plan = ScoringPlan([scorer_get("contains"), scorer_get("json_valid")], {})
    for scorer_id in ("contains", "json_valid"):
        shared = {id(resolved) for run in runs for s, resolved in plan.for_run(run) if s.id == scorer_id}
        assert len(shared) == 1
    outcomes, _ = outcomes_compute(plan, runs)
    assert [o.result.passed for o in outcomes if o.scorer_id == "contains"] == [True] * 5


def test_every_kind_of_config_gets_the_hash_config_hash_gives():
    configs = [
        {},
        {"expected": 'Focus pro 3h cuesta 75,00 €.\n"quoted" \u2028 \x01'},
        {"expected_tools": ["search", "fetch"], "tool_match": "exact"},
        {"value": ["a", "b"], "mode": "any"},
        {"ms": 2000},
        {"cents": 4.0},
        {"cents": 0.1},
        {"expected": 7500.0},
        {"expected": {"total_cents": 7500, "b": [1.0, None, True]}},
        {"expected": None, "z": False, "a": 2**63},
        {"schema": {"type": "object", "properties": {"x": {"minimum": 1.5}}}},
    ]
    plan = ScoringPlan([], {})
    for config in configs:
        assert plan._hashed(config).config_hash == config_hash(config), config


def test_the_engine_gives_the_collector_back_with_its_outcomes_in_the_oldest_generation():
    runs = [_run(pk, f"answer {pk}", {"contains": "invoice"}) for pk in range(50)]
    plan = ScoringPlan([scorer_get("contains"), scorer_get("answered")], {})
    gc.enable()
    try:
        outcomes, _ = outcomes_compute(plan, runs)
        assert gc.isenabled() and len(outcomes) == 100
        # Not left to a young collection to scan: moved to the oldest generation.
        oldest = {id(o) for o in gc.get_objects(generation=2)}
        assert all(id(o) in oldest for o in outcomes)
        gc.disable()  # a caller that paused the collector itself finds it paused still
        outcomes_compute(plan, runs)
        assert not gc.isenabled()
    finally:
        gc.enable()
