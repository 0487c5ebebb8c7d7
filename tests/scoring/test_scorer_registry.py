"""The registry lists exactly the seeds' built-ins (002's 13 and 003's regex) and the 4 agent
checks, and the package stays pure Python (no Django, DRF or Celery)."""

import ast
import json
import sys
from pathlib import Path

import pytest

import checks.scorers
from checks.expectations import EXPECTATIONS_SCHEMA
from checks.scorers import SCORERS, gating_scorers, scorer_get, scorers_describe

BUILTINS = [
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
]
AGENT_CHECKS = ["tool_choice", "tool_output_schema", "tool_output", "tool_calls"]
PACKAGE = Path(checks.scorers.__file__).parent


def test_it_registers_the_seeds_builtins_then_the_agent_checks_in_order():
    assert list(SCORERS) == BUILTINS + AGENT_CHECKS
    assert [s.kind for s in SCORERS.values()] == ["builtin"] * 14 + ["agent_check"] * 4


def test_it_finds_a_scorer_by_id_and_answers_none_for_an_unknown_one():
    assert scorer_get("latency_budget").id == "latency_budget"
    assert scorer_get("answer_relevance") is None
    assert scorer_get("") is None


def test_it_marks_exactly_the_scorers_that_cannot_run_without_config():
    needing = {s.id for s in SCORERS.values() if s.needs_config}
    assert needing == {
        "exact_match",
        "contains",
        "latency_budget",
        "cost_budget",
        "tool_efficiency",
        "span_present",
        "tool_succeeded",
        "tool_choice",
        "tool_output_schema",
        "tool_output",
        "tool_calls",
        "regex",
    }


def test_it_describes_every_scorer_as_json_for_the_api_listing():
    described = scorers_describe()
    json.dumps(described)  # the API serialises it as is
    assert [d["id"] for d in described] == BUILTINS + AGENT_CHECKS
    latency = next(d for d in described if d["id"] == "latency_budget")
    assert latency == {
        "id": "latency_budget",
        "description": latency["description"],
        "kind": "builtin",
        "needs_config": True,
        "config_schema": latency["config_schema"],
        "expectation_keys": ["latency_threshold_ms"],
        "version": "1",
    }
    assert latency["config_schema"]["required"] == ["ms"]


@pytest.mark.parametrize("scorer_id", BUILTINS + AGENT_CHECKS)
def test_it_gives_every_scorer_a_description_and_an_object_config_schema(scorer_id):
    scorer = SCORERS[scorer_id]
    assert scorer.description.endswith(".")
    assert scorer.config_schema["type"] == "object"
    assert scorer.config_schema["additionalProperties"] is False


def _imports(path):
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            yield node.module


def test_it_imports_nothing_but_the_standard_library_jsonschema_and_other_pure_checks():
    files = sorted(PACKAGE.glob("*.py"))
    assert len(files) >= 8
    outside = {
        (path.name, module)
        for path in files
        for module in _imports(path)
        if module.split(".")[0] not in (*sys.stdlib_module_names, "jsonschema", "re2", "checks")
    }
    assert outside == set()


def test_each_check_names_its_gate_category_and_the_expectation_that_turns_it_on():
    categories = {"tool_choice", "tool_args", "schema", "output", "threshold", "error"}
    for scorer in SCORERS.values():
        assert scorer.category in categories, scorer.id
        if scorer.gated_by is not None:
            assert scorer.gated_by in EXPECTATIONS_SCHEMA["properties"], scorer.id
            assert scorer.gated_by in scorer.expectation_keys, scorer.id


def test_the_gate_turns_on_checks_in_the_order_of_the_expectations_schema():
    expectations = {"latency_threshold_ms": 10, "contains": "x", "expected_tools": ["a"], "tool_output": {}}
    assert gating_scorers(expectations) == ["tool_choice", "tool_output", "contains", "latency_budget"]
    assert gating_scorers({"scorers": ["answered"], "contains": "x"}, ["answered", "no_errors"]) == [
        "contains",
        "answered",
        "no_errors",
    ]
