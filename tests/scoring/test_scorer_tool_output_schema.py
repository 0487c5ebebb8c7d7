"""tool_output_schema: the target tool's last result validates against its JSON Schema."""

import json

from checks.scorers import Abstain, resolve_config, run_from_payload, score_run, scorer_get

SCORER = scorer_get("tool_output_schema")
QUOTE_SCHEMA = {
    "type": "object",
    "required": ["room", "tier", "hours", "total_cents"],
    "properties": {
        "room": {"type": "string"},
        "tier": {"enum": ["basic", "pro"]},
        "hours": {"type": "integer", "minimum": 1},
        "total_cents": {"type": "integer", "minimum": 0},
    },
    "additionalProperties": False,
}
GOOD = {"room": "Focus", "tier": "pro", "hours": 3, "total_cents": 7500}


def _call(name, output, span_id=None, status="ok", error=None):
    return {
        "span_id": span_id or name,
        "kind": "tool",
        "name": name,
        "output": output,
        "status": status,
        "error": error,
    }


def _check(*spans, schema=QUOTE_SCHEMA, tool="quote_room"):
    run = run_from_payload({"trace_id": "t1", "spans": list(spans)})
    return score_run(SCORER, run, {"tool_output_schema": schema, "target_tool": tool})


def test_it_passes_a_result_stored_as_a_json_string_like_the_seeds_tools_return():
    result = _check(_call("quote_room", json.dumps(GOOD)))
    assert (result.passed, result.value) == (True, 1.0)
    assert result.detail == {"target_tool": "quote_room", "span_id": "quote_room", "call_status": "ok", "errors": []}


def test_it_lists_every_schema_error_with_its_path():
    bad = {"room": "Focus", "tier": "gold", "hours": 0, "total_cents": "7500", "note": "x"}
    result = _check(_call("quote_room", bad))
    assert (result.passed, result.value) == (False, 0.0)
    assert [(e["path"], e["validator"]) for e in result.detail["errors"]] == [
        ("$", "additionalProperties"),
        ("$.hours", "minimum"),
        ("$.tier", "enum"),
        ("$.total_cents", "type"),
    ]
    assert (
        result.reason
        == "quote_room result $: Additional properties are not allowed ('note' was unexpected) (and 3 more)"
    )


def test_it_fails_a_result_missing_a_required_field():
    partial = {k: v for k, v in GOOD.items() if k != "total_cents"}
    result = _check(_call("quote_room", partial))
    assert result.detail["errors"] == [
        {"path": "$", "message": "'total_cents' is a required property", "validator": "required"}
    ]


def test_it_fails_a_result_that_is_not_json_with_a_clear_error():
    result = _check(_call("quote_room", "Quoted Focus at 7500 cents"))
    assert not result.passed
    first = result.detail["errors"][0]
    assert first["path"] == "$"
    assert first["message"].startswith("the result is not JSON: ")
    assert result.reason.startswith("quote_room result $: the result is not JSON")


def test_it_accepts_a_plain_text_result_when_the_schema_asks_for_a_string():
    assert _check(_call("quote_room", "Quoted Focus"), schema={"type": "string"}).passed


def test_it_checks_the_last_call_of_the_target_tool():
    first_good_then_bad = [_call("quote_room", GOOD, "s1"), _call("quote_room", {"room": "Focus"}, "s2")]
    result = _check(*first_good_then_bad)
    assert not result.passed
    assert result.detail["span_id"] == "s2"
    assert _check(*reversed(first_good_then_bad)).passed


def test_it_abstains_when_the_target_tool_was_never_called():
    result = _check(_call("book_room", GOOD))
    assert isinstance(result, Abstain)
    assert result == Abstain(
        "target_tool_not_called",
        {
            "message": "target tool quote_room was not called",
            "target_tool": "quote_room",
            "actual_tools": ["book_room"],
        },
    )


def test_it_fails_when_the_last_call_failed_without_a_result():
    result = _check(_call("quote_room", None, status="error", error="pricing service down"))
    assert not result.passed
    assert result.detail["call_status"] == "error"
    assert (
        result.detail["errors"][0]["message"] == "the last quote_room call failed with no result: pricing service down"
    )


def test_it_targets_the_last_expected_tool_of_the_case_by_default():
    run = run_from_payload(
        {"trace_id": "t1", "spans": [_call("quote_room", GOOD), _call("book_room", {"booking_id": 1})]},
        expectations={"expected_tools": ["quote_room", "book_room"], "tool_output_schema": QUOTE_SCHEMA},
    )
    config = resolve_config(SCORER, None, run)
    assert config["target_tool"] == "book_room"
    assert not score_run(SCORER, run, config).passed


def test_it_abstains_on_an_invalid_schema():
    assert _check(_call("quote_room", GOOD), schema={"type": 5}).reason == "invalid_schema"


def test_a_schema_whose_dollar_schema_is_not_a_string_is_invalid_not_a_crash():
    from checks.scorers.schemas import schema_problems

    assert schema_problems({"$schema": 5}) == ["$[\"$schema\"]: 5 is not of type 'string'"]
    assert _check(_call("quote_room", GOOD), schema={"$schema": 5}).reason == "invalid_schema"
