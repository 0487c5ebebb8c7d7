"""score_run never raises: a crashing scorer or a missing config becomes an abstention."""

from dataclasses import replace

from checks.scorers import Abstain, Result, run_from_payload, score_run, scorer_get


def _run(**fields):
    return run_from_payload({"trace_id": "t1", **fields})


def test_it_returns_the_scorers_result():
    outcome = score_run(scorer_get("answered"), _run(output="Booked."), {})
    assert outcome == Result(1.0, True, "the run produced an answer", {"answer_type": "string", "length": 7})


def test_it_turns_a_crash_inside_a_scorer_into_a_scorer_error_abstention():
    def crashes(run, config):
        return {}["missing"]

    scorer = replace(scorer_get("answered"), func=crashes)
    outcome = score_run(scorer, _run(output="x"), {})
    assert outcome == Abstain(
        "scorer_error", {"message": "answered raised KeyError: 'missing'", "exception": "KeyError"}
    )


def test_it_turns_a_scorer_that_returns_something_else_into_a_scorer_error():
    scorer = replace(scorer_get("answered"), func=lambda run, config: 1.0)
    outcome = score_run(scorer, _run(output="x"), {})
    assert isinstance(outcome, Abstain)
    assert outcome.reason == "scorer_error"
    assert outcome.detail["message"] == "answered returned float"


def test_it_survives_a_malformed_config_that_slipped_past_validation():
    outcome = score_run(scorer_get("latency_budget"), _run(latency_ms=10), {"ms": "fast"})
    assert outcome.reason == "scorer_error"
    assert outcome.detail["exception"] == "TypeError"


def test_it_abstains_not_configured_when_a_scorer_needing_config_gets_none():
    outcome = score_run(scorer_get("latency_budget"), _run(latency_ms=10), None)
    assert outcome.reason == "not_configured"
    assert "latency_threshold_ms" in outcome.detail["message"]
    assert outcome.detail["scorer"] == "latency_budget"


def test_it_abstains_no_expected_output_for_exact_match_without_an_expected_answer():
    outcome = score_run(scorer_get("exact_match"), _run(output="x"), None)
    assert outcome.reason == "no_expected_output"
    assert "expected_output" in outcome.detail["message"]


def test_it_runs_a_scorer_without_config_on_a_none_config():
    outcome = score_run(scorer_get("no_errors"), _run(), None)
    assert isinstance(outcome, Result)
    assert outcome.passed


def test_it_builds_a_run_view_from_the_ingestion_payload_keeping_span_order():
    run = run_from_payload(
        {
            "trace_id": "run-42",
            "output": "ok",
            "latency_ms": 1200,
            "cost_cents": 0.84,
            "spans": [
                {"span_id": "s1", "kind": "llm", "name": "model_call"},
                {"span_id": "s2", "parent_id": "s1", "kind": "tool", "name": "quote_room", "input": {"room": "Focus"}},
                {"span_id": "s3", "kind": "tool", "name": "book_room", "status": "error", "error": "taken"},
            ],
        }
    )
    assert (run.trace_id, run.status, run.has_case, run.expectations) == ("run-42", "ok", False, {})
    assert [s.position for s in run.spans] == [0, 1, 2]
    assert run.tool_names() == ["quote_room", "book_room"]
    assert run.spans[1].parent_id == "s1"
    assert [s.failed for s in run.spans] == [False, False, True]


def test_it_marks_a_run_built_with_expectations_as_linked_to_a_case():
    assert run_from_payload({"trace_id": "t"}, expectations={}).has_case
    assert run_from_payload({"trace_id": "t"}, expected_output="x").has_case
    assert not run_from_payload({"trace_id": "t"}, expectations={"contains": "x"}, has_case=False).has_case
