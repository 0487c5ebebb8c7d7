"""A pass loads only the spans its scorers read, and every scorer answers the same as on the whole run."""

import pytest

from checks.scorers import READS, SCORERS
from datasets.models import Trace
from scoring.pipeline.engine import ScoringPlan, outcomes_compute
from scoring.pipeline.loading import runs_load
from tests.factories import trace_create

CONFIG = {
    "exact_match": {"expected": "Focus pro 3h cuesta 75,00 €."},
    "contains": {"value": "Focus"},
    "latency_budget": {"ms": 1000},
    "cost_budget": {"cents": 1},
    "tool_efficiency": {"max_calls": 1},
    "tool_choice": {"expected_tools": ["quote_room", "book_room"]},
    "regex": {"pattern": "[0-9]+"},
}


def _tool(span_id, name, started_at, **fields):
    return {"span_id": span_id, "kind": "tool", "name": name, "started_at": started_at, **fields}


@pytest.fixture
def runs(actors):
    trace_create(actors.acme, "no-spans", spans=[])
    trace_create(actors.acme, "answer-as-json", output={"total_cents": 7500}, spans=[])
    trace_create(
        actors.acme,
        "tools-out-of-order",
        spans=[
            {"span_id": "m", "kind": "llm", "name": "model", "started_at": "2026-11-30T10:00:00Z"},
            _tool("b", "book_room", "2026-11-30T10:00:03Z", status="error", error="full"),
            _tool("q", "quote_room", "2026-11-30T10:00:01Z", input={"room": "Focus"}, output={"total_cents": 7500}),
            _tool("q2", "quote_room", "2026-11-30T10:00:02Z", input={"room": "Focus"}),
        ],
    )
    return list(Trace.objects.order_by("pk").values_list("pk", flat=True))


@pytest.mark.parametrize("scorer_id", [s.id for s in SCORERS.values() if s.reads != "spans"])
def test_a_scorer_answers_the_same_on_what_it_reads_as_on_the_whole_run(runs, scorer_id):
    plan = ScoringPlan([SCORERS[scorer_id]], CONFIG)
    whole, _ = outcomes_compute(plan, runs_load(runs))
    partial, _ = outcomes_compute(plan, runs_load(runs, spans=plan.reads))
    assert [(o.key, o.result) for o in partial] == [(o.key, o.result) for o in whole]


def test_a_plan_reads_the_most_any_of_its_scorers_reads():
    assert ScoringPlan([SCORERS["answered"], SCORERS["json_valid"]], {}).reads == "nothing"
    assert ScoringPlan([SCORERS["answered"], SCORERS["tool_choice"]], {}).reads == "tool_names"
    assert ScoringPlan([SCORERS["tool_choice"], SCORERS["no_errors"]], {}).reads == "spans"
    assert set(s.reads for s in SCORERS.values()) <= set(READS)


def test_tool_names_come_in_execution_order_and_nothing_else_is_read(runs):
    run = runs_load(runs[-1:], spans="tool_names")[0]
    assert run.view.tool_names() == ["quote_room", "quote_room", "book_room"]
    assert {(s.input, s.output, s.error) for s in run.view.spans} == {(None, None, None)}
    assert runs_load(runs[-1:], spans="nothing")[0].view.spans == ()
