"""The scorers the system knows: the 13 built-ins of seed 002 and the 3 agent checks.

``SCORERS`` maps id to spec in the order ``GET /v1/api/scorers`` lists them. Judge
criteria are configured per project and are not listed here.
"""

from checks.expectations import EXPECTATIONS_SCHEMA

from . import agent_checks, answers, budgets, leaks, refusals, runs

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
)
AGENT_CHECK_IDS = ("tool_choice", "tool_output_schema", "tool_output")

_ALL = {s.id: s for module in (answers, runs, budgets, refusals, leaks, agent_checks) for s in module.SCORERS}
SCORERS = {scorer_id: _ALL[scorer_id] for scorer_id in (*BUILTIN_IDS, *AGENT_CHECK_IDS)}
EXPECTATION_KEYS = tuple(EXPECTATIONS_SCHEMA["properties"])
_GATED_BY = {s.gated_by: s.id for s in SCORERS.values() if s.gated_by}


def gating_scorers(expectations, extra_scorers=()):
    """The scorer ids a case is gated on, in report order, without repeats.

    Each expectation the case has turns on the check whose ``gated_by`` names it, in
    the order of the expectations schema; then the case's ``expectations.scorers`` and
    ``extra_scorers`` (the policy's).
    """
    ids = [_GATED_BY[key] for key in EXPECTATION_KEYS if key in expectations and key in _GATED_BY]
    for scorer in [*expectations.get("scorers", ()), *extra_scorers]:
        if scorer not in ids:
            ids.append(scorer)
    return ids


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
