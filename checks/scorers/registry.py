"""The scorers the system knows: the 13 built-ins of seed 002, ``regex`` (seed 003) and the agent checks.

``SCORERS`` maps id to spec in the order ``GET /v1/api/scorers`` lists them. Judge
criteria are configured per project and are not listed here.
"""

from checks.expectations import ANSWER_CHECKS, EXPECTATIONS_SCHEMA

from . import agent_checks, answers, budgets, leaks, patterns, refusals, runs, tool_calls

BUILTIN_IDS = (
    "answered",
    "no_errors",
    "exact_match",
    "contains",
    "json_valid",
    "latency_budget",
    "cost_budget",
    "no_tool_loop",
    "tool_efficiency",
    "not_a_refusal",
    "no_leaked_secret",
    "span_present",
    "tool_succeeded",
    "regex",
)
AGENT_CHECK_IDS = ("tool_choice", "tool_output_schema", "tool_output", "tool_calls")

_ALL = {
    s.id: s
    for module in (answers, runs, budgets, refusals, leaks, patterns, agent_checks, tool_calls)
    for s in module.SCORERS
}
SCORERS = {scorer_id: _ALL[scorer_id] for scorer_id in (*BUILTIN_IDS, *AGENT_CHECK_IDS)}
EXPECTATION_KEYS = tuple(EXPECTATIONS_SCHEMA["properties"])
_GATED_BY = {s.gated_by: s.id for s in SCORERS.values() if s.gated_by}


def gating_scorers(expectations, extra_scorers=()):
    """The scorer ids a case is gated on, in report order, without repeats.

    Each expectation the case has turns on the check whose ``gated_by`` names it, in
    the order of the expectations schema (``answer_check`` turns on the check it names);
    then the case's ``expectations.scorers`` and ``extra_scorers`` (the policy's).
    """
    ids = []
    for key in EXPECTATION_KEYS:
        if key in expectations:
            scorer = answer_check_scorer(expectations[key]) if key == "answer_check" else _GATED_BY.get(key)
            if scorer is not None and scorer not in ids:
                ids.append(scorer)
    for scorer in [*expectations.get("scorers", ()), *extra_scorers]:
        if scorer not in ids:
            ids.append(scorer)
    return ids


def answer_check_scorer(answer_check):
    """The scorer an ``answer_check`` names: a built-in check, a judge criterion's id, or None for ``none``."""
    return ANSWER_CHECKS.get(answer_check, answer_check)


def answer_is_checked(expected_output, expectations):
    """Whether a case's expected answer is checked: it has none, or its ``answer_check`` names a check that
    reads it (``exact``, ``json``, a judge criterion, or ``contains`` with no ``contains`` expectation).

    ``regex`` reads ``output_regex`` and ``none`` reads nothing: the expected answer is not compared, and
    the case does not claim it is.
    """
    if expected_output is None:
        return True
    answer_check = expectations.get("answer_check")
    if answer_check in (None, "none", "regex"):
        return False
    if answer_check == "contains":
        return "contains" not in expectations
    return True


def scorer_get(scorer_id):
    """The spec of ``scorer_id``, or None when no built-in scorer or agent check has that id."""
    return SCORERS.get(scorer_id)


def scorers_describe():
    """Every scorer as ``GET /v1/api/scorers`` lists it."""
    return [
        {
            "id": s.id,
            "description": s.description,
            "kind": s.kind,
            "needs_config": s.needs_config,
            "config_schema": s.config_schema,
            "expectation_keys": list(s.expectation_keys),
            "version": s.version,
        }
        for s in SCORERS.values()
    ]
