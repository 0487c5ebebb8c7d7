"""Budget scorers: latency_budget, cost_budget, tool_efficiency.

Every budget is inclusive, as in the seed's ``check_*_threshold``: a run passes when
its figure is at most the budget (1000 ms on a 1000 ms budget passes). A run that
recorded no latency (no cost) abstains with ``no_latency`` (``no_cost``) rather than
passing or failing on a missing figure; a run whose cost is unknown because a model it
called has no known price abstains with ``unknown_price`` naming the models. Cost is compared at the precision it is stored
with, a millionth of a cent, so float noise (0.1 + 0.2) does not fail a 0.3 budget.
tool_efficiency counts the run's tool calls (spans of kind ``tool``).
"""

from decimal import Decimal

from .base import Abstain, Result, Scorer
from .values import number

_COST_QUANTUM = Decimal("0.000001")
_FLOATS = (float, int)


def latency_budget(run, config):
    budget = config["ms"]
    if run.latency_ms is None:
        return Abstain("no_latency", {"message": "the run recorded no latency", "budget_ms": budget})
    detail = {"latency_ms": run.latency_ms, "budget_ms": budget}
    if run.latency_ms <= budget:
        return Result.verdict(True, f"{run.latency_ms} ms, within the {budget} ms budget", detail)
    return Result.verdict(False, f"{run.latency_ms} ms, over the {budget} ms budget", detail)


def _cents(value):
    return Decimal(str(value)).quantize(_COST_QUANTUM)


def _within(cost, budget):
    """``cost <= budget`` at a millionth of a cent."""
    # Figures more than 1e-5 apart compare the same as floats and as quantized decimals
    # (each side moves by at most half a millionth); only close calls need Decimal.
    if (
        type(cost) in _FLOATS
        and type(budget) in _FLOATS
        and abs(cost) < 1e9
        and abs(budget) < 1e9
        and abs(cost - budget) > 1e-5
    ):
        return cost <= budget
    return _cents(cost) <= _cents(budget)


def cost_budget(run, config):
    budget = config["cents"]
    if run.cost_cents is None and run.unpriced_models:
        models = list(run.unpriced_models)
        return Abstain(
            "unknown_price",
            {"message": f"no price is known for {', '.join(models)}", "models": models, "budget_cents": budget},
        )
    if run.cost_cents is None:
        return Abstain("no_cost", {"message": "the run recorded no cost", "budget_cents": budget})
    detail = {"cost_cents": number(run.cost_cents), "budget_cents": budget}
    shown = f"{number(run.cost_cents):g} cents"
    if _within(run.cost_cents, budget):
        return Result.verdict(True, f"{shown}, within the {budget:g} cents budget", detail)
    return Result.verdict(False, f"{shown}, over the {budget:g} cents budget", detail)


def tool_efficiency(run, config):
    budget = config["max_calls"]
    tools = run.tool_names()
    detail = {"tool_calls": len(tools), "max_calls": budget, "actual_tools": tools}
    if len(tools) <= budget:
        return Result.verdict(True, f"{len(tools)} tool call(s), within the budget of {budget}", detail)
    return Result.verdict(False, f"{len(tools)} tool call(s), over the budget of {budget}", detail)


def _from_expectation(key, config_key):
    def from_case(run):
        value = run.expectations.get(key)
        return None if value is None else {config_key: value}

    return from_case


SCORERS = (
    Scorer(
        id="latency_budget",
        description="The run finished within a budget in milliseconds (inclusive).",
        version="1",
        kind="builtin",
        needs_config=True,
        config_schema={
            "type": "object",
            "properties": {"ms": {"type": "integer", "minimum": 0, "description": "Longest the run may take."}},
            "required": ["ms"],
            "additionalProperties": False,
        },
        category="threshold",
        gated_by="latency_threshold_ms",
        expectation_keys=("latency_threshold_ms",),
        func=latency_budget,
        case_config=_from_expectation("latency_threshold_ms", "ms"),
        reads="nothing",
    ),
    Scorer(
        id="cost_budget",
        description="The run cost no more than a fixed amount in cents (inclusive).",
        version="1",
        kind="builtin",
        needs_config=True,
        config_schema={
            "type": "object",
            "properties": {"cents": {"type": "number", "minimum": 0, "description": "Most the run may cost."}},
            "required": ["cents"],
            "additionalProperties": False,
        },
        category="threshold",
        gated_by="cost_threshold_cents",
        expectation_keys=("cost_threshold_cents",),
        func=cost_budget,
        case_config=_from_expectation("cost_threshold_cents", "cents"),
        reads="nothing",
    ),
    Scorer(
        id="tool_efficiency",
        description="The run made no more tool calls than a budget (inclusive).",
        version="1",
        kind="builtin",
        needs_config=True,
        config_schema={
            "type": "object",
            "properties": {"max_calls": {"type": "integer", "minimum": 0, "description": "Most tool calls allowed."}},
            "required": ["max_calls"],
            "additionalProperties": False,
        },
        category="threshold",
        gated_by="tool_budget",
        expectation_keys=("tool_budget",),
        func=tool_efficiency,
        case_config=_from_expectation("tool_budget", "max_calls"),
        reads="tool_names",
    ),
)
