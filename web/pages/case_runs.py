"""What a case's page shows of its runs: its outcome in recent experiments (with trials),
and the newest gated run's answer and tool calls beside what the case expects.
"""

from datasets.run_selectors import runs_answers
from gating.history import case_history
from web.pages.evidence import pretty

EXPERIMENTS_SHOWN = 10


def _shown_trace_id(entry):
    """The run a gate result shows: its first failing trial, or its last."""
    trials = entry["trial_results"]
    failing = [t for t in trials if t.get("passed") is False]
    chosen = failing[0] if failing else (trials[-1] if trials else None)
    return chosen["trace_id"] if chosen else None


def case_runs(*, project, case):
    """``{history, flip_rate, latest}``: ``latest`` compares the newest gated run with the case, or is None."""
    history = case_history(case=case, limit=EXPERIMENTS_SHOWN)
    for entry in history["experiments"]:
        entry["trial"] = {
            "trials": entry["trials"],
            "passed": entry["passed_trials"],
            "flaky": entry["flaky"],
            "results": entry["trial_results"],
            "superseded": 0,
        }
    latest = None
    if history["experiments"]:
        newest = history["experiments"][0]
        trace_id = _shown_trace_id(newest)
        answer = runs_answers(project=project, trace_ids=[trace_id]).get(trace_id) if trace_id else None
        if answer is not None:
            expectations = case.expectations or {}
            expected_calls = expectations.get("expected_tool_calls") or expectations.get("expected_tools")
            latest = {
                "experiment": newest["experiment"],
                "trace_id": trace_id,
                "expected_output": pretty(case.expected_output) if case.expected_output is not None else None,
                "actual_output": pretty(answer["output"]) if answer["output"] is not None else None,
                "expected_calls": pretty(expected_calls) if expected_calls is not None else None,
                "actual_calls": pretty([{"name": c["name"], "input": c["input"]} for c in answer["tool_calls"]]),
            }
    return {"history": history["experiments"], "flip_rate": history["flip_rate"], "latest": latest}
