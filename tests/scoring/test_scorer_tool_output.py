"""tool_output: the target tool's last result carries the expected field values."""

import json

from checks.scorers import Abstain, resolve_config, run_from_payload, score_run, scorer_get

SCORER = scorer_get("tool_output")
QUOTE = {"room": "Focus", "tier": "pro", "hours": 3, "total_cents": 7500, "breakdown": {"base": 6000, "pro": 1500}}


def _call(name, output, span_id=None):
    return {"span_id": span_id or name, "kind": "tool", "name": name, "output": output}


def _check(expected, *spans, tool="quote_room"):
    run = run_from_payload({"trace_id": "t1", "spans": list(spans)})
    return score_run(SCORER, run, {"tool_output": expected, "target_tool": tool})


def test_it_passes_when_every_expected_field_has_its_value():
    result = _check({"total_cents": 7500, "room": "Focus"}, _call("quote_room", json.dumps(QUOTE)))
    assert (result.passed, result.value) == (True, 1.0)
    assert result.detail == {"target_tool": "quote_room", "span_id": "quote_room", "mismatches": []}


def test_it_lists_every_mismatching_field_with_expected_and_actual():
    result = _check(
        {"total_cents": 7500, "hours": 2, "room": "Focus"}, _call("quote_room", {**QUOTE, "total_cents": 6000})
    )
    assert (result.passed, result.value) == (False, 0.0)
    assert result.detail["mismatches"] == [
        {"field": "total_cents", "expected": 7500, "actual": 6000},
        {"field": "hours", "expected": 2, "actual": 3},
    ]
    assert result.reason == "quote_room result total_cents: expected 7500, got 6000 (and 1 more)"


def test_it_flags_a_missing_field_without_an_actual_value():
    result = _check({"discount_cents": 0}, _call("quote_room", QUOTE))
    assert result.detail["mismatches"] == [{"field": "discount_cents", "expected": 0, "missing": True}]
    assert result.reason == "quote_room result discount_cents: missing (expected 0)"


def test_it_compares_nested_objects_field_by_field():
    assert _check({"breakdown": {"pro": 1500}}, _call("quote_room", QUOTE)).passed
    result = _check({"breakdown": {"pro": 1000, "tax": 0}}, _call("quote_room", QUOTE))
    assert result.detail["mismatches"] == [
        {"field": "breakdown.pro", "expected": 1000, "actual": 1500},
        {"field": "breakdown.tax", "expected": 0, "missing": True},
    ]


def test_it_compares_values_as_json_so_a_string_number_is_a_mismatch():
    assert _check({"total_cents": 7500.0}, _call("quote_room", QUOTE)).passed
    assert not _check({"total_cents": "7500"}, _call("quote_room", QUOTE)).passed
    assert not _check({"hours": True}, _call("quote_room", {"hours": 1})).passed


def test_it_checks_the_last_call_of_the_target_tool():
    spans = [_call("quote_room", {"total_cents": 7500}, "s1"), _call("quote_room", {"total_cents": 6000}, "s2")]
    result = _check({"total_cents": 7500}, *spans)
    assert not result.passed
    assert result.detail["span_id"] == "s2"


def test_it_reports_every_field_missing_when_the_result_is_not_an_object():
    result = _check({"total_cents": 7500}, _call("quote_room", "Quoted Focus at 7500"))
    assert not result.passed
    assert result.detail["mismatches"] == [{"field": "total_cents", "expected": 7500, "missing": True}]
    assert result.detail["result"] == "Quoted Focus at 7500"


def test_it_abstains_when_the_target_tool_was_never_called():
    result = _check({"total_cents": 7500}, _call("book_room", {"total_cents": 7500}))
    assert isinstance(result, Abstain)
    assert result.reason == "target_tool_not_called"
    assert result.detail["message"] == "target tool quote_room was not called"


def test_it_takes_the_values_and_target_from_the_case():
    run = run_from_payload(
        {"trace_id": "t1", "spans": [_call("quote_room", json.dumps(QUOTE)), _call("book_room", {"ok": True})]},
        expectations={
            "expected_tools": ["quote_room", "book_room"],
            "target_tool": "quote_room",
            "tool_output": {"total_cents": 7500},
        },
    )
    assert score_run(SCORER, run, resolve_config(SCORER, {"tool_output": {}, "target_tool": "book_room"}, run)).passed
