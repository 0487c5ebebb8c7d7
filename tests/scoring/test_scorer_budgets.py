"""latency_budget, cost_budget and tool_efficiency: inclusive budgets, abstain without a figure."""

from dataclasses import replace
from decimal import Decimal

from checks.scorers import Abstain, resolve_config, run_from_payload, score_run, scorer_get


def _run(**fields):
    return run_from_payload({"trace_id": "t1", **fields})


def _tools(*names):
    return [{"span_id": f"s{i}", "kind": "tool", "name": name} for i, name in enumerate(names)]


class TestLatencyBudget:
    scorer = scorer_get("latency_budget")

    def test_it_passes_a_run_exactly_on_the_budget(self):
        result = score_run(self.scorer, _run(latency_ms=1000), {"ms": 1000})
        assert (result.passed, result.value) == (True, 1.0)
        assert result.detail == {"latency_ms": 1000, "budget_ms": 1000}
        assert result.reason == "1000 ms, within the 1000 ms budget"

    def test_it_fails_a_run_one_millisecond_over(self):
        result = score_run(self.scorer, _run(latency_ms=1001), {"ms": 1000})
        assert (result.passed, result.value) == (False, 0.0)
        assert result.reason == "1001 ms, over the 1000 ms budget"

    def test_it_abstains_when_the_run_recorded_no_latency(self):
        result = score_run(self.scorer, _run(latency_ms=None), {"ms": 1000})
        assert result == Abstain("no_latency", {"message": "the run recorded no latency", "budget_ms": 1000})

    def test_it_takes_the_budget_from_the_case(self):
        run = run_from_payload({"trace_id": "t1", "latency_ms": 1450}, expectations={"latency_threshold_ms": 1500})
        assert score_run(self.scorer, run, resolve_config(self.scorer, {"ms": 1000}, run)).passed

    def test_it_treats_a_zero_budget_as_zero_not_as_missing(self):
        run = run_from_payload({"trace_id": "t1", "latency_ms": 1}, expectations={"latency_threshold_ms": 0})
        assert resolve_config(self.scorer, None, run) == {"ms": 0}
        assert not score_run(self.scorer, run, {"ms": 0}).passed


class TestCostBudget:
    scorer = scorer_get("cost_budget")

    def test_it_passes_a_run_exactly_on_the_budget(self):
        result = score_run(self.scorer, _run(cost_cents=0.84), {"cents": 0.84})
        assert result.passed
        assert result.detail == {"cost_cents": 0.84, "budget_cents": 0.84}

    def test_it_fails_a_run_a_millionth_of_a_cent_over(self):
        assert not score_run(self.scorer, _run(cost_cents=Decimal("0.840001")), {"cents": 0.84}).passed

    def test_it_is_not_fooled_by_float_noise_in_a_sum_of_costs(self):
        assert score_run(self.scorer, _run(cost_cents=0.1 + 0.2), {"cents": 0.3}).passed

    def test_it_reads_a_decimal_cost_as_stored_and_reports_it_as_a_number(self):
        result = score_run(self.scorer, _run(cost_cents=Decimal("1.250000")), {"cents": 1})
        assert not result.passed
        assert result.detail == {"cost_cents": 1.25, "budget_cents": 1}
        assert result.reason == "1.25 cents, over the 1 cents budget"

    def test_it_abstains_when_the_run_recorded_no_cost(self):
        result = score_run(self.scorer, _run(cost_cents=None), {"cents": 1})
        assert isinstance(result, Abstain)
        assert result.reason == "no_cost"

    def test_it_passes_a_free_run_on_a_zero_budget(self):
        assert score_run(self.scorer, _run(cost_cents=0), {"cents": 0}).passed

    def test_it_abstains_naming_the_models_whose_price_is_unknown(self):
        run = replace(_run(cost_cents=None), unpriced_models=("reservo-llama", "other-ft"))
        result = score_run(self.scorer, run, {"cents": 1})
        assert isinstance(result, Abstain)
        assert result.reason == "unknown_price"
        assert result.detail["models"] == ["reservo-llama", "other-ft"]
        assert "reservo-llama" in result.detail["message"]


class TestToolEfficiency:
    scorer = scorer_get("tool_efficiency")

    def test_it_passes_a_run_with_exactly_the_budgeted_number_of_tool_calls(self):
        result = score_run(self.scorer, _run(spans=_tools("search_rooms", "quote_room")), {"max_calls": 2})
        assert result.passed
        assert result.detail == {"tool_calls": 2, "max_calls": 2, "actual_tools": ["search_rooms", "quote_room"]}

    def test_it_fails_a_run_with_one_call_too_many(self):
        result = score_run(self.scorer, _run(spans=_tools("a", "b", "c")), {"max_calls": 2})
        assert not result.passed
        assert result.reason == "3 tool call(s), over the budget of 2"

    def test_it_counts_only_tool_spans(self):
        spans = [*_tools("quote_room"), {"span_id": "llm1", "kind": "llm", "name": "model_call"}]
        assert score_run(self.scorer, _run(spans=spans), {"max_calls": 1}).passed

    def test_it_fails_any_tool_call_on_a_zero_budget(self):
        assert score_run(self.scorer, _run(spans=[]), {"max_calls": 0}).passed
        assert not score_run(self.scorer, _run(spans=_tools("a")), {"max_calls": 0}).passed

    def test_it_takes_the_budget_from_the_cases_tool_budget(self):
        run = run_from_payload({"trace_id": "t1", "spans": _tools("a", "b")}, expectations={"tool_budget": 1})
        assert not score_run(self.scorer, run, resolve_config(self.scorer, None, run)).passed
