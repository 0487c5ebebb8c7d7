"""tool_calls: the calls the agent made, with their arguments, against the expected ones.

Configured by the case's ``expected_tool_calls`` (``[{"name": "book_room", "args":
{"room": "Focus", "member": "Ana"}}, ...]``), ``tool_calls_match`` and ``args_match``,
or the same keys in a request config. A call is a span of kind ``tool``: its name is
the tool, its input the arguments (a JSON string is read as JSON).

``tool_calls_match`` compares the sequences (the modes of trajectory matching):

- ``strict`` (default): the same calls in the same order;
- ``unordered``: the same calls, any order;
- ``superset``: at least the expected calls; other calls are allowed;
- ``subset``: no call outside the expected ones; expected calls may be missing.

``args_match`` compares one call's arguments: ``subset`` (default: every expected
argument is there and matches, others are allowed), ``exact`` (the same keys, at every
depth) or ``ignore`` (names only). Expected values may be matchers (``$regex``,
``$approx``, ``$in``, ``$any``; ``checks.scorers.matchers``).

The reason names the first mismatch in words (``book_room.member: expected 'Ana', got
'Anna'``, ``missing call cancel_booking``, ``unexpected call book_room``); ``detail`` keeps
every mismatch and ``actual_calls``, the calls made with their arguments. Without
order, each expected call is paired with a distinct call made (a maximum matching), and
an expected call left unpaired is compared with the closest call of the same tool, so
the reason says which argument differs rather than only that the call is missing.
"""

from .base import Result, Scorer
from .matchers import matcher_problems, value_mismatches
from .values import json_lenient

SEQUENCE_MODES = ("strict", "unordered", "superset", "subset")
ARGS_MODES = ("subset", "exact", "ignore")


def actual_calls(run):
    """``[{"name", "args"}]`` of the run's tool calls, in execution order."""
    return [{"name": span.name, "args": json_lenient(span.input)} for span in run.tool_calls()]


def _call_mismatches(expected, actual, args_mode):
    """The differences of one call pair, as texts prefixed with the tool's name."""
    if expected["name"] != actual["name"]:
        return [f"expected call {expected['name']}, got {actual['name']}"]
    if args_mode == "ignore" or "args" not in expected:
        return []
    return [
        f"{path}: {text}"
        for path, text in value_mismatches(
            expected["args"], actual["args"], expected["name"], exact_keys=args_mode == "exact"
        )
    ]


def _strict(expected, actual, args_mode):
    out = []
    for index in range(max(len(expected), len(actual))):
        if index >= len(actual):
            out.append(f"missing call {expected[index]['name']}")
        elif index >= len(expected):
            out.append(f"unexpected call {actual[index]['name']}")
        else:
            found = _call_mismatches(expected[index], actual[index], args_mode)
            out.extend(f"call {index + 1}: {m}" if m.startswith("expected call") else m for m in found)
    return out


def _pairing(expected, actual, args_mode):
    """``{expected index: actual index}``: a maximum matching of calls that match whole."""
    fits = [[j for j, a in enumerate(actual) if not _call_mismatches(e, a, args_mode)] for e in expected]
    owner = {}

    def place(i, seen):
        for j in fits[i]:
            if j not in seen:
                seen.add(j)
                if j not in owner or place(owner[j], seen):
                    owner[j] = i
                    return True
        return False

    for i in range(len(expected)):
        place(i, set())
    return {i: j for j, i in owner.items()}


def _unordered(expected, actual, args_mode, mode):
    paired = _pairing(expected, actual, args_mode)
    spare = [j for j in range(len(actual)) if j not in paired.values()]
    out = []
    for i, call in enumerate(expected):
        if i in paired:
            continue
        same_tool = [j for j in spare if actual[j]["name"] == call["name"]]
        if same_tool:
            closest = min(same_tool, key=lambda j: len(_call_mismatches(call, actual[j], args_mode)))
            spare.remove(closest)
            out.extend(_call_mismatches(call, actual[closest], args_mode))
        elif mode != "subset":
            out.append(f"missing call {call['name']}")
    if mode != "superset":
        out.extend(f"unexpected call {actual[j]['name']}" for j in spare)
    return out


def tool_call_mismatches(expected, actual, *, mode="strict", args_mode="subset"):
    """Every mismatch of the calls made (``actual``) against ``expected``, in words."""
    if mode == "strict":
        return _strict(expected, actual, args_mode)
    return _unordered(expected, actual, args_mode, mode)


def tool_calls(run, config):
    expected = config["expected_tool_calls"]
    mode = config.get("tool_calls_match", "strict")
    args_mode = config.get("args_match", "subset")
    actual = actual_calls(run)
    mismatches = tool_call_mismatches(expected, actual, mode=mode, args_mode=args_mode)
    detail = {
        "mismatches": mismatches,
        "actual_calls": actual,
        "expected_calls": expected,
        "tool_calls_match": mode,
        "args_match": args_mode,
    }
    if not mismatches:
        return Result.verdict(True, f"the {len(actual)} tool call(s) match the expected calls ({mode})", detail)
    more = f" (and {len(mismatches) - 1} more)" if len(mismatches) > 1 else ""
    return Result.verdict(False, mismatches[0] + more, detail)


def _from_case(run):
    expectations = run.expectations
    if "expected_tool_calls" not in expectations:
        return None
    return {
        "expected_tool_calls": expectations["expected_tool_calls"],
        "tool_calls_match": expectations.get("tool_calls_match", "strict"),
        "args_match": expectations.get("args_match", "subset"),
    }


def tool_calls_config_problems(config):
    """Matchers that cannot run (a pattern RE2 refuses, a malformed ``$approx``), as config problems."""
    calls = config.get("expected_tool_calls") if isinstance(config, dict) else None
    if not isinstance(calls, list):
        return []
    return [
        f"tool_calls.expected_tool_calls[{i}].{path}: {message}"
        for i, call in enumerate(calls)
        if isinstance(call, dict) and "args" in call
        for path, message in matcher_problems(call["args"])
    ]


EXPECTED_CALLS_SCHEMA = {
    "type": "array",
    "items": {
        "type": "object",
        "properties": {"name": {"type": "string", "minLength": 1}, "args": {"type": "object"}},
        "required": ["name"],
        "additionalProperties": False,
    },
}

SCORERS = (
    Scorer(
        id="tool_calls",
        description="The tool calls made, with their arguments, match expected_tool_calls "
        "(tool_calls_match: strict, unordered, superset, subset; args_match: subset, exact, ignore).",
        version="1",
        kind="agent_check",
        needs_config=True,
        config_schema={
            "type": "object",
            "properties": {
                "expected_tool_calls": EXPECTED_CALLS_SCHEMA,
                "tool_calls_match": {"enum": list(SEQUENCE_MODES), "default": "strict"},
                "args_match": {"enum": list(ARGS_MODES), "default": "subset"},
            },
            "required": ["expected_tool_calls"],
            "additionalProperties": False,
        },
        category="tool_args",
        gated_by="expected_tool_calls",
        expectation_keys=("expected_tool_calls", "tool_calls_match", "args_match"),
        func=tool_calls,
        case_config=_from_case,
        config_problems=tool_calls_config_problems,
        missing_message="tool_calls is not configured: give config.tool_calls.expected_tool_calls or the case's "
        "expectation expected_tool_calls",
    ),
)
