"""What a page shows of a case's checks: every mismatch, and expected beside actual.

A check's one-line reason names its first problem only; its ``detail`` keeps them all
(``mismatches``, ``errors``, ``repeats``) and, for the checks that compare, the expected
and the actual value. The pages list every line and put the two values side by side,
pretty-printed, so nothing hides behind "and 1 more".
"""

import json

from checks.scorers import SCORERS

# The detail keys that hold an expected and an actual value, per kind of check.
COMPARED = (
    ("expected", "actual"),
    ("expected_calls", "actual_calls"),
    ("expected_tools", "actual_tools"),
)
LISTED = ("mismatches", "errors", "repeats")


def pretty(value):
    """A value as a reviewer reads it: strings as they are, everything else as indented JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False, default=str)


def _line(item):
    if isinstance(item, str):
        return item
    if not isinstance(item, dict):
        return pretty(item)
    if "field" in item:
        if item.get("missing"):
            return f"{item['field']}: missing, expected {item.get('expected')!r}"
        return f"{item['field']}: expected {item.get('expected')!r}, got {item.get('actual')!r}"
    if "message" in item:
        path = item.get("path", "$")
        return item["message"] if path == "$" else f"{path}: {item['message']}"
    if "tool" in item and "calls" in item:
        return f"{item['tool']} called {item['calls']} times with the same input {item.get('input')}"
    return pretty(item)


def check_evidence(check):
    """``{scorer, status, reason, lines, expected, actual, judge}`` of one check of a gate answer."""
    detail = check.get("detail") or {}
    lines = [_line(item) for key in LISTED for item in (detail.get(key) or [])]
    pair = next(((detail[e], detail[a]) for e, a in COMPARED if e in detail and a in detail), None)
    return {
        "scorer": check["scorer"],
        "status": check["status"],
        "reason": check.get("reason") or "",
        "lines": lines if len(lines) > 1 else [],
        "expected": pretty(pair[0]) if pair else None,
        "actual": pretty(pair[1]) if pair else None,
        # A check that is not a built-in scorer is a judge criterion: its reason is the judge's words.
        "judge": check["scorer"] not in SCORERS,
    }


def case_evidence(result):
    """The evidence of a gate case: its failed checks first, then the ones that could not be measured."""
    checks = result.get("checks") or []
    failed = [check_evidence(c) for c in checks if c.get("status") == "failed"]
    abstained = [check_evidence(c) for c in checks if c.get("status") == "abstained"]
    judged = [check_evidence(c) for c in checks if c.get("status") == "passed" and c["scorer"] not in SCORERS]
    return failed + abstained + judged


def trials_view(result):
    """The trials of a gate case: ``{trials, passed, flaky, results, superseded}`` (one trial reads as one)."""
    results = result.get("trial_results") or []
    return {
        "trials": result.get("trials", len(results)),
        "passed": result.get("passed_trials", sum(1 for t in results if t.get("passed"))),
        "flaky": bool(result.get("flaky")),
        "results": results,
        "superseded": len(result.get("superseded") or []),
    }
