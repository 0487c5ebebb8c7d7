"""Scorers of how the run went: no_errors, no_tool_loop, span_present, tool_succeeded.

- A span failed when its status is ``error`` or it carries a non-blank ``error``; the
  same holds for the run itself. no_errors fails on any failed span or a failed run.
- A tool loop is the same tool called twice with the same input. Inputs are compared
  by canonical JSON (sorted keys; ``1`` and ``1.0`` alike); a string input that holds
  JSON is compared by its parsed value, so ``'{"a":1,"b":2}'`` repeats
  ``{"b": 2, "a": 1}``. Calls of different tools never repeat each other.
- span_present passes when some span has every required field: ``kind`` equal, and
  ``name`` equal (exact, case-sensitive).
- tool_succeeded passes when the tool ran at least once with status ``ok`` and no
  error. A tool that was never called fails ("the tool ran and ended well" is false);
  a tool that only failed fails. It abstains only when no tool is configured.
"""

from .agent_checks import target_tool_from
from .base import SPAN_KINDS, Abstain, Result, Scorer
from .values import canonical_json, json_lenient, preview

_ERROR_CHARS = 300


def _error_text(error):
    return None if error is None else error[:_ERROR_CHARS]


def no_errors(run, config):
    failed = [
        {"span_id": s.span_id, "name": s.name, "kind": s.kind, "status": s.status, "error": _error_text(s.error)}
        for s in run.spans
        if s.failed
    ]
    run_failed = run.status == "error" or bool(run.error and run.error.strip())
    detail = {"failed_spans": failed, "run_status": run.status, "run_error": _error_text(run.error)}
    if not failed and not run_failed:
        return Result.verdict(True, f"no failed span in {len(run.spans)} span(s)", detail)
    reasons = []
    if run_failed:
        reasons.append(f"the run failed: {run.error or 'status error'}"[:120])
    if failed:
        first = failed[0]
        reasons.append(
            f"{len(failed)} failed span(s), first {first['name'] or first['span_id']}: {first['error'] or 'status error'}"[
                :160
            ]
        )
    return Result.verdict(False, "; ".join(reasons), detail)


def _input_key(value):
    try:
        return canonical_json(json_lenient(value))
    except (TypeError, ValueError):
        return repr(value)


def no_tool_loop(run, config):
    seen = {}
    for call in run.tool_calls():
        seen.setdefault((call.name, _input_key(call.input)), []).append(call)
    looped = [(key, calls) for (_, key), calls in seen.items() if len(calls) > 1]
    repeats = [
        {
            "tool": calls[0].name,
            "input": preview(json_lenient(calls[0].input)),
            "calls": len(calls),
            "span_ids": [c.span_id for c in calls],
        }
        for _, calls in looped
    ]
    detail = {"repeats": repeats, "tool_calls": len(run.tool_calls())}
    if not repeats:
        return Result.verdict(True, "no tool was called twice with the same input", detail)
    key, calls = looped[0]
    shown = key if len(key) <= 80 else key[:80] + "…"
    more = f" (and {len(repeats) - 1} more)" if len(repeats) > 1 else ""
    return Result.verdict(False, f"{calls[0].name} called {len(calls)} times with the same input {shown}{more}", detail)


def span_present(run, config):
    required = {key: config[key] for key in ("kind", "name") if key in config}
    if not required:
        return Abstain("not_configured", {"message": "span_present needs a kind or a name"})
    matching = [s.span_id for s in run.spans if all(getattr(s, key) == value for key, value in required.items())]
    detail = {"required": required, "matching_spans": matching, "span_count": len(run.spans)}
    wanted = " ".join(f"{key}={value!r}" for key, value in required.items())
    if matching:
        return Result.verdict(True, f"{len(matching)} span(s) with {wanted}", detail)
    return Result.verdict(False, f"no span with {wanted} among {len(run.spans)} span(s)", detail)


def _span_present_from_case(run):
    required = run.expectations.get("required_span")
    return dict(required) if required else None


def tool_succeeded(run, config):
    tool = config["tool"]
    calls = [s for s in run.tool_calls() if s.name == tool]
    failed = [{"span_id": s.span_id, "status": s.status, "error": _error_text(s.error)} for s in calls if s.failed]
    ok_calls = len(calls) - len(failed)
    detail = {
        "tool": tool,
        "calls": len(calls),
        "ok_calls": ok_calls,
        "failed_calls": failed,
        "actual_tools": run.tool_names(),
    }
    if not calls:
        return Result.verdict(False, f"{tool} was not called", detail)
    if ok_calls:
        return Result.verdict(True, f"{tool} ended well in {ok_calls} of {len(calls)} call(s)", detail)
    return Result.verdict(
        False, f"every {tool} call failed ({len(calls)}): {failed[0]['error'] or 'status error'}"[:200], detail
    )


def _tool_succeeded_from_case(run):
    tool = target_tool_from(run.expectations)
    return None if tool is None else {"tool": tool}


SCORERS = (
    Scorer(
        id="no_errors",
        description="No span of the run failed and the run itself did not fail.",
        version="1",
        kind="builtin",
        needs_config=False,
        config_schema={"type": "object", "properties": {}, "additionalProperties": False},
        category="error",
        expectation_keys=(),
        func=no_errors,
    ),
    Scorer(
        id="no_tool_loop",
        description="No tool was called twice with the same input.",
        version="1",
        kind="builtin",
        needs_config=False,
        config_schema={"type": "object", "properties": {}, "additionalProperties": False},
        category="threshold",
        expectation_keys=(),
        func=no_tool_loop,
    ),
    Scorer(
        id="span_present",
        description="The run recorded a span of the required kind and/or name.",
        version="1",
        kind="builtin",
        needs_config=True,
        config_schema={
            "type": "object",
            "properties": {"kind": {"enum": list(SPAN_KINDS)}, "name": {"type": "string", "minLength": 1}},
            "minProperties": 1,
            "additionalProperties": False,
        },
        category="error",
        gated_by="required_span",
        expectation_keys=("required_span",),
        func=span_present,
        case_config=_span_present_from_case,
    ),
    Scorer(
        id="tool_succeeded",
        description="The required tool ran and at least one of its calls ended well.",
        version="1",
        kind="builtin",
        needs_config=True,
        config_schema={
            "type": "object",
            "properties": {"tool": {"type": "string", "minLength": 1, "description": "The tool that must succeed."}},
            "required": ["tool"],
            "additionalProperties": False,
        },
        category="error",
        expectation_keys=("target_tool", "expected_tools"),
        func=tool_succeeded,
        case_config=_tool_succeeded_from_case,
        missing_message="tool_succeeded is not configured: give config.tool_succeeded.tool or the case's "
        "expectation target_tool (or expected_tools)",
    ),
)
