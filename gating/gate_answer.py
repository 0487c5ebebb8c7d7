"""The gate's answer: one result per case, and the figures over all of them.

A case's result carries the seed's fields (``name, passed, actual_tools,
tool_choice_ok, schema_errors, output_errors, cost_cents, cost_ok, latency_ms,
latency_ok``) taken from the trial its verdict shows (the first failing trial, or the
last), every check of that trial, the categories of failed and unmeasured checks, the
reasons in words, and the trials: how many were measured and passed, each trial's
outcome, and the runs superseded by a later run of the same trial; ``retried`` names the
superseded runs that failed, each beside the run that replaced it.
"""

from checks.scorers import answer_is_checked

# Fields of a case's result that a gate run's list of cases keeps (the rest is detail).


def case_answer(case, trial_runs, trial_checks, trial_verdicts, decided, tools):
    """The result of ``case`` (a dict of the case's values) from its trials and their checks."""
    shown = decided.shown
    run = trial_runs.trials[shown][1] if shown is not None else None
    checks = trial_checks[shown] if shown is not None else []
    return {
        "name": case["name"],
        "case_id": case["id"],
        "case_version": case["version"],
        "trace_id": run["trace_id"] if run else None,
        "passed": decided.passed,
        "measured": decided.measured,
        "quarantined": case["quarantined"],
        **_seed_fields(checks, run, tools.get(run["id"], []) if run else []),
        "checks": [c.as_dict() for c in checks],
        "failed_checks": decided.failed_checks,
        "unmeasured_checks": decided.unmeasured_checks,
        "reasons": decided.reasons,
        "answer_checked": answer_is_checked(case["expected_output"], case["expectations"]),
        "trials": decided.trials,
        "passed_trials": decided.passed_trials,
        "flaky": decided.flaky,
        "trial_results": [
            {
                "trial": number,
                "trace_id": trial_run["trace_id"],
                "passed": verdict.passed if verdict.measured else None,
                "failed_checks": verdict.failed_checks,
            }
            for (number, trial_run), verdict in zip(trial_runs.trials, trial_verdicts, strict=True)
        ],
        "superseded": trial_runs.superseded,
    }


def retried_trials(trial_runs, trial_verdicts, earlier):
    """The trials re-sent after a failure: ``[{trial, superseded: {trace_id, passed}, counted: {trace_id,
    passed}}]`` for each superseded run that was measured and failed, beside the run that replaced it."""
    counted = {
        number: {"trace_id": run["trace_id"], "passed": verdict.passed if verdict.measured else None}
        for (number, run), verdict in zip(trial_runs.trials, trial_verdicts, strict=True)
    }
    return [
        {"trial": number, "superseded": {"trace_id": run["trace_id"], "passed": False}, "counted": counted[number]}
        for (number, run), verdict in zip(trial_runs.superseded_runs, earlier, strict=True)
        if verdict.measured and not verdict.passed
    ]


def _seed_fields(checks, run, actual_tools):
    by_scorer = {c.scorer: c for c in checks}
    choice, calls = by_scorer.get("tool_choice"), by_scorer.get("tool_calls")
    schema, output = by_scorer.get("tool_output_schema"), by_scorer.get("tool_output")
    cost, latency = by_scorer.get("cost_budget"), by_scorer.get("latency_budget")
    return {
        "actual_tools": (
            choice.detail.get("actual_tools") if choice and "actual_tools" in choice.detail else actual_tools
        ),
        "tool_choice_ok": not _failed(choice),
        "tool_calls_ok": not _failed(calls),
        "tool_call_errors": calls.detail.get("mismatches", []) if _failed(calls) else [],
        "schema_errors": _schema_errors(schema),
        "schema_checked": _measured(schema),
        "output_errors": _output_errors(output),
        "output_checked": _measured(output),
        "cost_cents": float(run["cost_cents"]) if run and run["cost_cents"] is not None else None,
        "cost_ok": not _failed(cost),
        "latency_ms": run["latency_ms"] if run else None,
        "latency_ok": not _failed(latency),
    }


def _failed(check):
    return bool(check and check.status == "failed")


def _measured(check):
    return bool(check and check.status in ("passed", "failed"))


def _schema_errors(check):
    if not _failed(check):
        return []
    return [
        e["message"] if e.get("path", "$") == "$" else f"{e['path']}: {e['message']}"
        for e in check.detail.get("errors", [])
    ]


def _output_errors(check):
    if not _failed(check):
        return []
    lines = []
    for m in check.detail.get("mismatches", []):
        if m.get("missing"):
            lines.append(f"{m['field']}: missing, expected {m['expected']!r}")
        else:
            lines.append(f"{m['field']}: expected {m['expected']!r}, got {m['actual']!r}")
    return lines


def verdict_figures(verdict, policy):
    """The answer's figures from a ``GateVerdict`` and the policy it was decided under."""
    return {
        "verdict": verdict.verdict,
        "passed": verdict.passed,
        "passed_cases": verdict.passed_cases,
        "total_cases": verdict.total_cases,
        "measured_cases": verdict.measured_cases,
        "unmeasured_cases": verdict.unmeasured_cases,
        "pass_rate": verdict.pass_rate,
        "floor": policy.min_pass_rate,
        "max_abstained": policy.max_abstained,
        "k": policy.trials,
        "trial_pass_ratio": policy.trial_pass_ratio,
        "max_flaky": policy.max_flaky,
        "pass_at_1": verdict.pass_at_1,
        "pass_hat_k": verdict.pass_hat_k,
        "flaky_cases": verdict.flaky_cases,
        "blocked_by": verdict.blocked_by,
    }
