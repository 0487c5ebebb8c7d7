"""Agent checks of the seed's gate: tool_choice, tool_output_schema, tool_output.

Tool calls are the run's spans of kind ``tool``, in execution order; a span's name is
the tool. Configured by a case's expectations (or the same keys in a request config).

- tool_choice compares the tools called with ``expected_tools`` under ``tool_match``:
  ``exact`` (the default: same list, same order), ``in_order`` (the expected tools
  appear in that order, other calls may come between: a subsequence), ``any_order``
  (the same calls counted with repeats, any order), ``superset`` (every expected tool
  is called at least once; other tools and repeats are allowed).
- tool_output_schema and tool_output read the LAST call of the target tool
  (``target_tool``, default the last of ``expected_tools``). A result stored as a
  string holding JSON is parsed first (the seed's tools return JSON strings). When the
  target tool was never called they abstain with ``target_tool_not_called``: an empty
  error list must never be readable as a pass.
- tool_output_schema lists every schema error with its path. A string result that is
  not JSON is validated as the string it is, so a schema that expects an object fails
  it with the error "the result is not JSON".
- tool_output compares each expected field with the result's field: nested objects
  field by field (``room.name``), anything else by JSON equality (``7500 == 7500.0``,
  ``"7500" != 7500``, lists in order). A field absent from the result is a mismatch
  with ``"missing": true`` and no ``actual``.
"""

from collections import Counter

from jsonschema.exceptions import SchemaError

from .base import Abstain, Result, Scorer
from .schemas import schema_errors
from .values import json_equal, json_from_string, preview

TOOL_MATCH_MODES = ("exact", "in_order", "any_order", "superset")


def _is_subsequence(expected, actual):
    calls = iter(actual)
    return all(any(tool == called for called in calls) for tool in expected)


def tools_match(expected, actual, mode):
    """Whether the tools called (``actual``) satisfy ``expected`` under ``mode``."""
    if mode == "exact":
        return list(actual) == list(expected)
    if mode == "in_order":
        return _is_subsequence(expected, actual)
    if mode == "any_order":
        return Counter(actual) == Counter(expected)
    if mode == "superset":
        return set(expected) <= set(actual)
    raise ValueError(f"unknown tool_match {mode!r}; expected one of {', '.join(TOOL_MATCH_MODES)}")


def target_tool_from(expectations):
    """``target_tool``, else the last of ``expected_tools``, else None."""
    if expectations.get("target_tool"):
        return expectations["target_tool"]
    tools = expectations.get("expected_tools") or []
    return tools[-1] if tools else None


def tool_choice(run, config):
    expected = list(config["expected_tools"])
    mode = config.get("tool_match") or "exact"
    if mode not in TOOL_MATCH_MODES:
        return Abstain("invalid_config", {"message": f"unknown tool_match {mode!r}"})
    actual = run.tool_names()
    same = actual == expected  # nothing missing, nothing extra, whatever the mode
    detail = {
        "actual_tools": actual,
        "expected_tools": expected,
        "tool_match": mode,
        "missing": [] if same else _left_over(expected, actual),
        "extra": [] if same else _left_over(actual, expected),
    }
    shown = f"{expected}" if mode == "exact" else f"{expected} ({mode})"
    if same or tools_match(expected, actual, mode):
        return Result(1.0, True, f"called {actual}, as expected {shown}", detail)
    return Result(0.0, False, f"expected {shown}, called {actual}", detail)


def _left_over(items, taken):
    """``items`` less ``taken``, counted with repeats, grouped by first appearance: ``Counter`` subtraction's elements."""
    counts = {}
    for item in items:
        counts[item] = counts.get(item, 0) + 1
    for item in taken:
        if item in counts:
            counts[item] -= 1
    return [item for item, n in counts.items() for _ in range(n)]


def _tool_choice_from_case(run):
    if "expected_tools" not in run.expectations:
        return None
    return {
        "expected_tools": run.expectations["expected_tools"],
        "tool_match": run.expectations.get("tool_match", "exact"),
    }


def last_call(run, tool):
    """The last call of ``tool`` in the run, or None."""
    calls = [span for span in run.tool_calls() if span.name == tool]
    return calls[-1] if calls else None


def _not_called(run, tool):
    return Abstain(
        "target_tool_not_called",
        {"message": f"target tool {tool} was not called", "target_tool": tool, "actual_tools": run.tool_names()},
    )


def tool_output_schema(run, config):
    tool = config["target_tool"]
    call = last_call(run, tool)
    if call is None:
        return _not_called(run, tool)
    detail = {"target_tool": tool, "span_id": call.span_id, "call_status": "error" if call.failed else "ok"}
    if call.failed and call.output is None:
        detail["errors"] = [
            {
                "path": "$",
                "message": f"the last {tool} call failed with no result: {call.error or 'status error'}",
                "validator": "status",
            }
        ]
        return Result.verdict(False, f"the last {tool} call failed with no result", detail)
    ok, parsed = json_from_string(call.output)
    result = parsed if ok else call.output
    try:
        errors = schema_errors(config["tool_output_schema"], result)
    except SchemaError as exc:
        return Abstain("invalid_schema", {"message": f"the schema of {tool} is invalid: {exc.message}"})
    if errors and isinstance(call.output, str) and not ok:
        errors.insert(0, {"path": "$", "message": f"the result is not JSON: {parsed}", "validator": "json"})
    detail["errors"] = errors
    if not errors:
        return Result.verdict(True, f"the {tool} result matches its schema", detail)
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return Result.verdict(False, f"{tool} result {errors[0]['path']}: {errors[0]['message']}{more}", detail)


def _mismatches(expected, actual, prefix=""):
    out = []
    for key, want in expected.items():
        field = f"{prefix}{key}"
        if not isinstance(actual, dict) or key not in actual:
            out.append({"field": field, "expected": want, "missing": True})
        elif isinstance(want, dict) and isinstance(actual[key], dict):
            out.extend(_mismatches(want, actual[key], f"{field}."))
        elif not json_equal(want, actual[key]):
            out.append({"field": field, "expected": want, "actual": preview(actual[key])})
    return out


def _describe(mismatch):
    if mismatch.get("missing"):
        return f"{mismatch['field']}: missing (expected {mismatch['expected']!r})"
    return f"{mismatch['field']}: expected {mismatch['expected']!r}, got {mismatch['actual']!r}"


def tool_output(run, config):
    tool = config["target_tool"]
    call = last_call(run, tool)
    if call is None:
        return _not_called(run, tool)
    ok, parsed = json_from_string(call.output)
    result = parsed if ok else call.output
    mismatches = _mismatches(config["tool_output"], result)
    detail = {"target_tool": tool, "span_id": call.span_id, "mismatches": mismatches}
    if not isinstance(result, dict):
        detail["result"] = preview(result)
    if not mismatches:
        return Result.verdict(True, f"the {tool} result carries the expected values", detail)
    more = f" (and {len(mismatches) - 1} more)" if len(mismatches) > 1 else ""
    return Result.verdict(False, f"{tool} result {_describe(mismatches[0])}{more}", detail)


def _from_case_with_target(key):
    def from_case(run):
        if key not in run.expectations:
            return None
        target = target_tool_from(run.expectations)
        return None if target is None else {key: run.expectations[key], "target_tool": target}

    return from_case


_TARGET = {"type": "string", "minLength": 1, "description": "The tool whose last result is checked."}

SCORERS = (
    Scorer(
        id="tool_choice",
        description="The tools called, in order, match expected_tools under tool_match (default exact).",
        version="1",
        kind="agent_check",
        needs_config=True,
        config_schema={
            "type": "object",
            "properties": {
                "expected_tools": {"type": "array", "items": {"type": "string", "minLength": 1}},
                "tool_match": {"enum": list(TOOL_MATCH_MODES), "default": "exact"},
            },
            "required": ["expected_tools"],
            "additionalProperties": False,
        },
        category="tool_choice",
        gated_by="expected_tools",
        expectation_keys=("expected_tools", "tool_match"),
        func=tool_choice,
        case_config=_tool_choice_from_case,
        missing_message="tool_choice is not configured: give config.tool_choice.expected_tools or the case's expectation expected_tools",
        reads="tool_names",
    ),
    Scorer(
        id="tool_output_schema",
        description="The target tool's last result validates against its JSON Schema.",
        version="1",
        kind="agent_check",
        needs_config=True,
        config_schema={
            "type": "object",
            "properties": {"tool_output_schema": {"type": "object"}, "target_tool": _TARGET},
            "required": ["tool_output_schema", "target_tool"],
            "additionalProperties": False,
        },
        category="schema",
        gated_by="tool_output_schema",
        expectation_keys=("tool_output_schema", "target_tool", "expected_tools"),
        func=tool_output_schema,
        case_config=_from_case_with_target("tool_output_schema"),
        schema_keys=("tool_output_schema",),
        missing_message="tool_output_schema is not configured: it needs a schema (expectation tool_output_schema) "
        "and a target tool (target_tool, or expected_tools)",
    ),
    Scorer(
        id="tool_output",
        description="The target tool's last result carries the expected field values.",
        version="1",
        kind="agent_check",
        needs_config=True,
        config_schema={
            "type": "object",
            "properties": {"tool_output": {"type": "object"}, "target_tool": _TARGET},
            "required": ["tool_output", "target_tool"],
            "additionalProperties": False,
        },
        category="output",
        gated_by="tool_output",
        expectation_keys=("tool_output", "target_tool", "expected_tools"),
        func=tool_output,
        case_config=_from_case_with_target("tool_output"),
        missing_message="tool_output is not configured: it needs field values (expectation tool_output) "
        "and a target tool (target_tool, or expected_tools)",
    ),
)
