"""The verdict as text: the seed's 1 + N console lines, then figures and reasons for people."""

from __future__ import annotations

import json
from typing import Any

NAME_WIDTH = 38  # the seed's column: f"  {name:38} {status}"
# Checks of the target tool's result: they abstain when the wrong tool was called, which
# tool_choice already says.
_TARGET_CHECKS = ("tool_output_schema", "tool_output")


def case_passed(case: dict) -> bool:
    return case.get("passed") is True


def case_measured(case: dict) -> bool:
    return case.get("measured") is not False


def case_has_no_run(case: dict) -> bool:
    return "trace_id" in case and case["trace_id"] is None


def trial_evidence(case: dict) -> list[str]:
    """``trials=c/n`` and ``flaky`` for a case measured over more than one trial; nothing otherwise."""
    results = case.get("trial_results") or []
    if len(results) <= 1:
        return []
    parts = [f"trials={case.get('passed_trials', 0)}/{case.get('trials', 0)}"]
    if case.get("flaky"):
        parts.append("flaky")
    return parts


def case_evidence(case: dict) -> list[str]:
    """The evidence of a failed case, one item per failed check, in a fixed order.

    With more than one trial, ``trials=c/n`` and ``flaky`` come first. Then the seed's
    fields: ``tool_choice_ok=False actual_tools=[...]``, ``tool_calls_ok=False
    tool_call_errors=["..."]``, ``schema_errors=[...]``, ``output_errors=[...]``, ``cost_ok=False cost_cents=...``,
    ``latency_ok=False latency_ms=...``; then ``scorer=reason`` for every other failed or
    abstained check, in the server's order. A schema or output check that abstained
    because the wrong tool was called is left out: tool_choice already says why. A case
    with no run, or whose failure no check explains, shows ``error=<its reasons>``.
    """
    reasons = [str(r) for r in case.get("reasons") or []]
    if case_has_no_run(case):
        return ["error=" + ("; ".join(reasons) or "no run recorded for this case")]
    parts = trial_evidence(case)
    given = len(parts)
    shown = set()
    if case.get("tool_choice_ok") is False:
        actual_tools = case.get("actual_tools") or []
        parts.append(f"tool_choice_ok=False actual_tools={actual_tools!r}")
        shown.add("tool_choice")
    if case.get("tool_calls_ok") is False:
        errors = json.dumps([str(e) for e in case.get("tool_call_errors") or []], ensure_ascii=False)
        parts.append(f"tool_calls_ok=False tool_call_errors={errors}")
        shown.add("tool_calls")
    if case.get("schema_errors"):
        parts.append(f"schema_errors={case['schema_errors']!r}")
        shown.add("tool_output_schema")
    if case.get("output_errors"):
        parts.append(f"output_errors={case['output_errors']!r}")
        shown.add("tool_output")
    if case.get("cost_ok") is False:
        parts.append(f"cost_ok=False cost_cents={case.get('cost_cents')!r}")
        shown.add("cost_budget")
    if case.get("latency_ok") is False:
        parts.append(f"latency_ok=False latency_ms={case.get('latency_ms')!r}")
        shown.add("latency_budget")
    wrong_tool = case.get("tool_choice_ok") is False
    for check in case.get("checks") or []:
        if not isinstance(check, dict):
            continue
        status = check.get("status")
        scorer = str(check.get("scorer") or "check")
        if status not in ("failed", "abstained") or scorer in shown:
            continue
        if wrong_tool and status == "abstained" and scorer in _TARGET_CHECKS:
            continue
        parts.append(f"{scorer}={check.get('reason') or status}")
    if len(parts) == given:
        parts.append("error=" + ("; ".join(reasons) or "the server gave no reason"))
    return parts


def case_line(case: dict) -> str:
    """One case as the seed prints it; a failure carries ``  -- <evidence>``, and so does a
    passing case that was flaky over its trials (``PASS  -- trials=2/3 flaky``)."""
    name = str(case.get("name", "?"))
    if case_passed(case):
        flaky = trial_evidence(case) if case.get("flaky") else []
        return f"  {name:{NAME_WIDTH}} PASS" + (f"  -- {' '.join(flaky)}" if flaky else "")
    return f"  {name:{NAME_WIDTH}} FAIL  -- " + " ".join(case_evidence(case))


def gate_counts(gate: dict) -> tuple[int, int]:
    cases = gate.get("cases") or []
    passed = gate.get("passed_cases")
    total = gate.get("total_cases")
    if passed is None:
        passed = sum(1 for c in cases if case_passed(c))
    if total is None:
        total = len(cases)
    return passed, total


def _fixed(value) -> str:
    try:
        return f"{float(value):.3f}"
    except (TypeError, ValueError):
        return "n/a"


def _signed(value) -> str:
    try:
        return f"{float(value):+.3f}" if float(value) else "0.000"
    except (TypeError, ValueError):
        return "n/a"


def baseline_of(gate: dict) -> tuple[str | None, Any]:
    baseline = gate.get("baseline")
    if isinstance(baseline, dict) and baseline.get("experiment"):
        return str(baseline["experiment"]), baseline.get("pass_rate")
    if isinstance(baseline, str) and baseline:
        return baseline, None
    return None, None


def figures_line(gate: dict, sep: str = "  ") -> str:
    """``floor: 1.000  pass rate: 0.800  baseline v1: 1.000  delta: -0.200``, then with trials
    ``pass^3=0.733 flaky=1``, and ``quarantined=1`` when cases were quarantined."""
    parts = [f"floor: {_fixed(gate.get('floor'))}", f"pass rate: {_fixed(gate.get('pass_rate'))}"]
    name, rate = baseline_of(gate)
    if name is None:
        parts.append("baseline: none")
    else:
        parts += [f"baseline {name}: {_fixed(rate)}", f"delta: {_signed(gate.get('delta'))}"]
    k, flaky = gate.get("k") or 1, gate.get("flaky_cases") or 0
    if k > 1 or flaky:
        parts.append(f"pass^{k}={_fixed(gate.get('pass_hat_k'))} flaky={flaky}")
    if gate.get("quarantined_cases"):
        parts.append(f"quarantined={gate['quarantined_cases']}")
    return sep.join(parts)


def bar_move_text(move: dict) -> str:
    """``policy: max_flaky 0 → none (key ci, 2026-12-02T10:00:00+00:00; why: flaky vendor)``."""
    who = ", ".join(str(part) for part in (move.get("by"), move.get("at")) if part)
    why = f"; why: {move['reason']}" if move.get("reason") else ""
    return f"{move.get('kind', 'bar')}: {move.get('what', '?')} ({who}{why})"


def bar_moved_lines(gate: dict) -> list[str]:
    """``bar moved since baseline:`` and one indented line per move; nothing when the bar held."""
    moves = [m for m in gate.get("bar_moved") or [] if isinstance(m, dict)]
    if not moves:
        return []
    lines = ["bar moved since baseline:"] + [f"  {bar_move_text(m)}" for m in moves]
    if gate.get("bar_moved_more"):
        lines.append(f"  ... and {gate['bar_moved_more']} more (see the gate run)")
    return lines


def format_verdict(gate: dict) -> str:
    """The text ``evalgate gate`` prints: the seed's 1 + N lines, then figures and reasons."""
    cases = gate.get("cases") or []
    passed, total = gate_counts(gate)
    lines = [f"GATE: {gate.get('verdict')} ({passed}/{total})"]
    lines += [case_line(case) for case in cases]
    lines += ["", figures_line(gate)]
    lines += [f"blocked by: {item}" for item in gate.get("blocked_by") or []]
    lines += bar_moved_lines(gate)
    if gate.get("unmeasured_cases"):
        lines.append(f"unmeasured cases: {gate['unmeasured_cases']} (allowed: {gate.get('max_abstained', 0)})")
    lines += [f"advisory: {item}" for item in gate.get("advisory") or []]
    for case in gate.get("quarantined") or []:
        state = "PASS" if case_passed(case) else "FAIL"
        lines.append(f"quarantined: {case.get('name', '?')} {state} (not counted)")
    if gate.get("unchecked_answers"):
        lines.append("expected answers nothing checks: " + ", ".join(str(n) for n in gate["unchecked_answers"]))
    lines += [retried_line(retry) for retry in gate.get("retried") or []]
    lines += [
        f"warning: run {m.get('trace_id')} does not carry the input of its case {m.get('case')}: attached to the wrong case?"
        for m in gate.get("input_mismatches") or []
    ]
    if gate.get("gate_run_id") is not None:
        lines.append(f"gate run: {gate['gate_run_id']}" + (f"  {gate['url']}" if gate.get("url") else ""))
    failed = [case for case in cases if not case_passed(case)]
    if failed:
        lines += ["", "Failures:"]
        for case in failed:
            lines.append(f"  {case.get('name', '?')}" + ("" if case_measured(case) else " (not measured)"))
            lines += [f"    {reason}" for reason in case.get("reasons") or ["(the server gave no reason)"]]
            if case.get("run_url"):
                lines.append(f"    run: {case['run_url']}")
    return "\n".join(lines)


def retried_line(retry: dict) -> str:
    """``retried: quote trial 2: v1-quote-2 FAIL, then v1-quote-2-again PASS (flaky)``."""
    earlier, counted = retry.get("superseded") or {}, retry.get("counted") or {}
    return (
        f"retried: {retry.get('case', '?')} trial {retry.get('trial', '?')}: {earlier.get('trace_id')} "
        f"{_outcome(earlier.get('passed'))}, then {counted.get('trace_id')} {_outcome(counted.get('passed'))} (flaky)"
    )


def _outcome(passed) -> str:
    return "PASS" if passed is True else ("FAIL" if passed is False else "not measured")


def _names(items) -> str:
    return ", ".join(str(item) for item in items) or "none"


def case_findings(case: dict) -> list[str]:
    """What failed in a case, in words for people (Markdown, JUnit bodies): no Python reprs.

    The same order and the same checks as ``case_evidence``: ``tools called: book_room``,
    ``schema: <error>; <error>``, ``output: <mismatch>``, ``cost 0.55 cents is over the
    threshold``, ``latency 1850 ms is over the threshold``, then ``<scorer>: <reason>`` for
    every other failed or unmeasured check, or the case's reasons when nothing else says why.
    """
    if case_has_no_run(case):
        return [str(r) for r in case.get("reasons") or ["no run recorded for this case"]]
    findings, shown = [], set()
    if len(case.get("trial_results") or []) > 1:
        strip = " ".join(
            "✓" if t.get("passed") else ("✗" if t.get("passed") is False else "–") for t in case["trial_results"]
        )
        findings.append(f"trials: {case.get('passed_trials', 0)} of {case.get('trials', 0)} passed ({strip})")
    if case.get("tool_choice_ok") is False:
        findings.append(f"tools called: {_names(case.get('actual_tools') or [])}")
        shown.add("tool_choice")
    if case.get("tool_calls_ok") is False:
        findings.append("tool calls: " + "; ".join(str(e) for e in case.get("tool_call_errors") or []))
        shown.add("tool_calls")
    if case.get("schema_errors"):
        findings.append("schema: " + "; ".join(str(e) for e in case["schema_errors"]))
        shown.add("tool_output_schema")
    if case.get("output_errors"):
        findings.append("output: " + "; ".join(str(e) for e in case["output_errors"]))
        shown.add("tool_output")
    if case.get("cost_ok") is False:
        findings.append(f"cost {number_text(case.get('cost_cents'))} cents is over the threshold")
        shown.add("cost_budget")
    if case.get("latency_ok") is False:
        findings.append(f"latency {number_text(case.get('latency_ms'))} ms is over the threshold")
        shown.add("latency_budget")
    wrong_tool = case.get("tool_choice_ok") is False
    for check in case.get("checks") or []:
        if not isinstance(check, dict) or check.get("status") not in ("failed", "abstained"):
            continue
        scorer = str(check.get("scorer") or "check")
        if scorer in shown or (wrong_tool and check["status"] == "abstained" and scorer in _TARGET_CHECKS):
            continue
        verb = "" if check["status"] == "failed" else "not measured, "
        findings.append(f"{scorer}: {verb}{check.get('reason') or check['status']}")
    return findings or [str(r) for r in case.get("reasons") or ["the server gave no reason"]]


def number_text(value) -> str:
    """A figure for people: at most 4 decimals, no float noise (-0.2, not -0.19999999999999996)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return "n/a" if value is None else str(value)
    rounded = round(float(value), 4)
    return str(int(rounded)) if rounded == int(rounded) and abs(rounded) < 1e15 else str(rounded)
