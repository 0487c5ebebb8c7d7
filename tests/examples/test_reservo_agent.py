"""Reservo's scripted agent and golden set: the clean scripts pass the seed's five checks,
every override script breaks exactly the checks it is named for, and runs are reproducible.

The five checks are computed here as seed 000/001 defines them (tool choice exact, schema
errors, expected field values, cost <= threshold, latency <= threshold), independently of
the server's scorers.
"""

import json
import math
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from checks.expectations import EXPECTATIONS_SCHEMA
from examples.reservo import (
    GOLDEN_CASES_PATH,
    OUTPUT_SCHEMAS,
    OVERRIDES,
    SCRIPTS_DIR,
    ReservoState,
    ToolError,
    load_golden_cases,
    load_script,
    pricing,
    reset_state,
    run_reservo_agent,
    tools,
)

CASE_NAMES = [
    "quote_focus_pro_3h",
    "quote_focus_basic_3h",
    "book_focus_pro_3h_ana",
    "book_boardroom_pro_1h_sofia",
    "book_and_cancel_studio_basic_1h_diego",
]
CASE_KEYS = {"name", "input", "expected_output", "expectations", "status", "notes", "metadata"}
EXPECTATION_KEYS = {
    "expected_tools",
    "tool_match",
    "target_tool",
    "tool_output",
    "tool_output_schema",
    "cost_threshold_cents",
    "latency_threshold_ms",
}
CASES = {case["name"]: case for case in load_golden_cases()}


class _Missing:
    def __repr__(self):
        return "<missing>"


MISSING = _Missing()


def run_case(name, script=None):
    case = CASES[name]
    reset_state()
    return run_reservo_agent(case["input"], case["metadata"]["model_script"] if script is None else script)


def seed_checks(run, expectations):
    """The seed's five checks; schema and output are only checked when the tool choice is right."""
    checks = {"tool_choice_ok": run.tools_called == expectations["expected_tools"]}
    checks["schema_errors"] = []
    checks["output_errors"] = []
    if checks["tool_choice_ok"]:
        result = run.last_result(expectations["target_tool"])
        validator = jsonschema.Draft7Validator(expectations["tool_output_schema"])
        checks["schema_errors"] = [error.message for error in validator.iter_errors(result)]
        for key, expected in expectations["tool_output"].items():
            actual = result.get(key, MISSING) if isinstance(result, dict) else MISSING
            if actual != expected:
                checks["output_errors"].append(f"{key}: expected {expected!r}, got {actual!r}")
    checks["cost_ok"] = run.cost_cents <= expectations["cost_threshold_cents"]
    checks["latency_ok"] = run.latency_ms <= expectations["latency_threshold_ms"]
    return checks


def broken(checks):
    failed = []
    if not checks["tool_choice_ok"]:
        failed.append("tool_choice")
    if checks["schema_errors"]:
        failed.append("schema")
    if checks["output_errors"]:
        failed.append("output")
    if not checks["cost_ok"]:
        failed.append("cost")
    if not checks["latency_ok"]:
        failed.append("latency")
    return failed


def turn(stop_reason, *blocks):
    return {"stop_reason": stop_reason, "content": list(blocks)}


def text(value):
    return {"type": "text", "text": value}


def tool_use(name, tool_input, id_="toolu_01"):
    return {"type": "tool_use", "id": id_, "name": name, "input": tool_input}


# The golden set


def test_it_holds_exactly_the_five_cases_in_order():
    assert list(CASES) == CASE_NAMES
    assert len(GOLDEN_CASES_PATH.read_text(encoding="utf-8").splitlines()) == 5


@pytest.mark.parametrize("name", CASE_NAMES)
def test_it_keeps_each_case_to_the_listed_keys_and_a_valid_expectations_object(name):
    case = CASES[name]
    assert set(case) == CASE_KEYS
    # The Ana booking is also checked by its arguments (tool_calls), beyond the seed's five checks.
    extra = {"expected_tool_calls"} if name == "book_focus_pro_3h_ana" else set()
    assert set(case["expectations"]) == EXPECTATION_KEYS | extra
    jsonschema.validate(case["expectations"], EXPECTATIONS_SCHEMA)
    assert case["expected_output"] is None
    assert case["status"] == "active"
    assert case["expectations"]["tool_match"] == "exact"
    assert case["expectations"]["target_tool"] == case["expectations"]["expected_tools"][-1]
    assert case["expectations"]["tool_output_schema"] == OUTPUT_SCHEMAS[case["expectations"]["target_tool"]]
    assert case["notes"] and "\n" not in case["notes"]
    assert set(case["metadata"]) == {"model_script"}


def test_it_books_then_cancels_in_the_two_step_case():
    expectations = CASES["book_and_cancel_studio_basic_1h_diego"]["expectations"]
    assert expectations["expected_tools"] == ["book_room", "cancel_booking"]
    assert expectations["target_tool"] == "cancel_booking"


def test_it_publishes_draft_07_output_schemas_that_refuse_unknown_fields():
    assert set(OUTPUT_SCHEMAS) == set(tools.TOOL_NAMES)
    for schema in OUTPUT_SCHEMAS.values():
        jsonschema.Draft7Validator.check_schema(schema)
        assert schema["additionalProperties"] is False
        assert set(schema["required"]) == set(schema["properties"])


# Clean scripts


@pytest.mark.parametrize("name", CASE_NAMES)
def test_it_passes_all_five_checks_on_the_clean_script(name):
    expectations = CASES[name]["expectations"]
    run = run_case(name)

    assert run.status == "ok" and run.error is None and run.answer
    assert run.tools_called == expectations["expected_tools"]
    for call in run.tool_calls:
        assert call.ok
        jsonschema.validate(call.result, OUTPUT_SCHEMAS[call.name])
    result = run.last_result(expectations["target_tool"])
    assert {key: result[key] for key in expectations["tool_output"]} == expectations["tool_output"]
    assert run.cost_cents <= expectations["cost_threshold_cents"]
    assert run.latency_ms <= expectations["latency_threshold_ms"]
    assert broken(seed_checks(run, expectations)) == []


@pytest.mark.parametrize("name", CASE_NAMES)
def test_it_gives_the_same_run_for_the_same_script_twice(name):
    first = run_case(name)
    second = run_case(name)
    assert (first.cost_cents, first.latency_ms) == (second.cost_cents, second.latency_ms)
    assert first.to_dict() == second.to_dict()
    json.dumps(first.to_dict())


def test_it_does_not_change_cost_when_a_script_reorders_tool_input_keys():
    script = CASES["quote_focus_pro_3h"]["metadata"]["model_script"]
    reordered = json.loads(json.dumps(script))
    reordered[0]["content"][0]["input"] = {"hours": 3, "tier": "pro", "room": "Focus"}
    assert run_case("quote_focus_pro_3h", reordered).cost_cents == run_case("quote_focus_pro_3h").cost_cents


def test_it_computes_cost_and_latency_by_the_documented_formula():
    case = CASES["quote_focus_pro_3h"]
    run = run_case("quote_focus_pro_3h")
    result_json = json.dumps({"room": "Focus", "tier": "pro", "hours": 3, "total_cents": 7500, "currency": "EUR"})
    answer = case["metadata"]["model_script"][1]["content"][0]["text"]
    input_tokens = math.ceil(len(case["input"]) / 4) + math.ceil(len(result_json) / 4)
    output_tokens = math.ceil(len('{"hours": 3, "room": "Focus", "tier": "pro"}') / 4) + math.ceil(len(answer) / 4)

    assert (run.input_tokens, run.output_tokens) == (input_tokens, output_tokens)
    assert run.cost_cents == round((input_tokens * 0.3 + output_tokens * 1.5) / 1000, 4)
    assert run.cost_cents == pytest.approx(sum(t.cost_cents for t in run.turns))
    assert run.latency_ms == 2 * 400 + 120


def test_it_records_deterministic_offsets_and_latencies():
    run = run_case("book_and_cancel_studio_basic_1h_diego")
    assert [(t.start_offset_ms, t.latency_ms) for t in run.turns] == [(0, 400), (650, 400), (1250, 400)]
    assert [(c.name, c.start_offset_ms, c.latency_ms) for c in run.tool_calls] == [
        ("book_room", 400, 250),
        ("cancel_booking", 1050, 200),
    ]
    assert run.latency_ms == 1650


def test_it_bills_each_turn_for_the_tool_results_fed_back_to_it():
    run = run_case("book_and_cancel_studio_basic_1h_diego")
    book, cancel = run.tool_calls
    assert run.turns[1].input_tokens == pricing.count_tokens(book.result_json)
    assert run.turns[2].input_tokens == pricing.count_tokens(cancel.result_json)


def test_it_keeps_the_json_fed_back_and_the_parsed_result_side_by_side():
    run = run_case("book_and_cancel_studio_basic_1h_diego")
    tool_results = [
        block for m in run.messages if m["role"] == "user" and isinstance(m["content"], list) for block in m["content"]
    ]
    assert [block["content"] for block in tool_results] == [call.result_json for call in run.tool_calls]
    for call in run.tool_calls:
        assert json.loads(call.result_json) == call.result
    assert [m["role"] for m in run.messages] == ["user", "assistant", "user", "assistant", "user", "assistant"]


# Thresholds: honest headroom, but an obviously longer script breaks them


@pytest.mark.parametrize("name", CASE_NAMES)
def test_it_fails_latency_and_only_latency_with_one_extra_model_turn(name):
    script = list(CASES[name]["metadata"]["model_script"])
    script.insert(0, turn("pause_turn", text("Un momento.")))
    assert broken(seed_checks(run_case(name, script), CASES[name]["expectations"])) == ["latency"]


@pytest.mark.parametrize("name", CASE_NAMES)
def test_it_fails_cost_and_only_cost_with_an_answer_500_characters_longer(name):
    script = json.loads(json.dumps(CASES[name]["metadata"]["model_script"]))
    script[-1]["content"][0]["text"] += " " + "x" * 499
    assert broken(seed_checks(run_case(name, script), CASES[name]["expectations"])) == ["cost"]


@pytest.mark.parametrize("name", CASE_NAMES)
def test_it_leaves_room_for_a_somewhat_longer_answer(name):
    script = json.loads(json.dumps(CASES[name]["metadata"]["model_script"]))
    script[-1]["content"][0]["text"] += " " + "x" * 299
    assert broken(seed_checks(run_case(name, script), CASES[name]["expectations"])) == []


# Override scripts


def test_it_names_every_script_file_in_overrides_and_the_readme():
    assert {path.stem for path in SCRIPTS_DIR.glob("*.json")} == set(OVERRIDES)
    readme = (SCRIPTS_DIR.parent / "README.md").read_text(encoding="utf-8")
    for stem in OVERRIDES:
        assert f"{stem}.json" in readme


@pytest.mark.parametrize("stem", sorted(OVERRIDES))
def test_it_breaks_exactly_the_checks_each_override_is_named_for(stem):
    override = OVERRIDES[stem]
    run = run_case(override["case"], load_script(stem))
    assert run.status == "ok"
    assert broken(seed_checks(run, CASES[override["case"]]["expectations"])) == override["breaks"]


def test_it_reproduces_the_seed_regression_with_quote_books_instead():
    checks = seed_checks(
        run_case("quote_focus_pro_3h", load_script("quote_books_instead")), CASES["quote_focus_pro_3h"]["expectations"]
    )
    assert checks["tool_choice_ok"] is False
    assert run_case("quote_focus_pro_3h", load_script("quote_books_instead.json")).tools_called == ["book_room"]


def test_it_reproduces_seed_exercise_one_with_no_cancel():
    name = "book_and_cancel_studio_basic_1h_diego"
    assert run_case(name, load_script("no_cancel")).tools_called == ["book_room"]


def test_it_reports_the_wrong_fields_with_quote_wrong_hours():
    run = run_case("quote_focus_pro_3h", load_script("quote_wrong_hours"))
    checks = seed_checks(run, CASES["quote_focus_pro_3h"]["expectations"])
    assert checks["output_errors"] == ["hours: expected 3, got 2", "total_cents: expected 7500, got 5000"]


def test_it_breaks_the_schema_through_the_breakdown_field_with_quote_with_breakdown():
    run = run_case("quote_focus_basic_3h", load_script("quote_with_breakdown"))
    checks = seed_checks(run, CASES["quote_focus_basic_3h"]["expectations"])
    assert run.last_result("quote_room")["hourly_cents"] == 1500
    assert checks["schema_errors"] == ["Additional properties are not allowed ('hourly_cents' was unexpected)"]


def test_it_records_a_refused_cancel_as_a_failed_call_with_cancel_unknown_booking():
    run = run_case("book_and_cancel_studio_basic_1h_diego", load_script("cancel_unknown_booking"))
    call = run.last_call("cancel_booking")
    assert call.ok is False
    assert call.result == {"error": "unknown booking 'BK-0002'"}
    assert run.status == "ok"


# Tools and state


def test_it_prices_the_documented_anchors():
    state = ReservoState()
    anchors = {
        ("Focus", "pro", 3): 7500,
        ("Focus", "basic", 3): 4500,
        ("Boardroom", "pro", 1): 6000,
        ("Studio", "basic", 1): 3000,
    }
    for (room, tier, hours), total in anchors.items():
        assert state.quote_room({"room": room, "tier": tier, "hours": hours})["total_cents"] == total


def test_it_restarts_booking_ids_after_a_reset():
    state = ReservoState()
    booking = {"room": "Focus", "tier": "basic", "hours": 1, "member": "Ana"}
    assert [state.book_room(booking)["booking_id"] for _ in range(2)] == ["BK-0001", "BK-0002"]
    state.reset()
    assert state.book_room(booking)["booking_id"] == "BK-0001"
    assert list(state.bookings) == ["BK-0001"]


def test_it_restarts_booking_ids_between_agent_runs_after_reset_state():
    assert run_case("book_focus_pro_3h_ana").last_result("book_room")["booking_id"] == "BK-0001"
    assert run_case("book_boardroom_pro_1h_sofia").last_result("book_room")["booking_id"] == "BK-0001"


def test_it_cancels_the_booking_it_just_made_and_refunds_it_in_full():
    state = ReservoState()
    made = state.book_room({"room": "Studio", "tier": "basic", "hours": 1, "member": "Diego"})
    cancelled = state.cancel_booking({"booking_id": made["booking_id"]})
    assert cancelled == {"booking_id": "BK-0001", "status": "cancelled", "refund_cents": 3000}
    assert state.bookings["BK-0001"]["status"] == "cancelled"
    with pytest.raises(ToolError, match="already cancelled"):
        state.cancel_booking({"booking_id": "BK-0001"})


@pytest.mark.parametrize(
    "tool, arguments, message",
    [
        ("quote_room", {"room": "Lobby", "tier": "pro", "hours": 1}, "unknown room"),
        ("quote_room", {"room": "Focus", "tier": "gold", "hours": 1}, "unknown tier"),
        ("quote_room", {"room": "Focus", "tier": "pro", "hours": 0}, "hours must be"),
        ("quote_room", {"room": "Focus", "tier": "pro", "hours": True}, "hours must be"),
        ("quote_room", {"room": "Focus", "tier": "pro"}, "missing argument hours"),
        (
            "book_room",
            {"room": "Focus", "tier": "pro", "hours": 1, "member": "Ana", "vip": True},
            "unexpected argument vip",
        ),
        ("book_room", {"room": "Focus", "tier": "pro", "hours": 1, "member": " "}, "member must be"),
        ("cancel_booking", {"booking_id": "BK-0099"}, "unknown booking"),
    ],
)
def test_it_refuses_bad_tool_input_with_a_tool_error(tool, arguments, message):
    with pytest.raises(ToolError, match=message):
        ReservoState().call(tool, arguments)


def test_it_runs_against_an_explicit_state_without_touching_the_default_one():
    reset_state()
    state = ReservoState()
    run = run_reservo_agent(
        "Reserva",
        [
            turn("tool_use", tool_use("book_room", {"room": "Focus", "tier": "pro", "hours": 1, "member": "Ana"})),
            turn("end_turn", text("Hecho.")),
        ],
        state=state,
    )
    assert run.status == "ok"
    assert list(state.bookings) == ["BK-0001"]
    assert tools.STATE.bookings == {}


# The loop's edges


def test_it_feeds_a_refused_tool_call_back_as_an_error_and_keeps_going():
    reset_state()
    run = run_reservo_agent(
        "Cancela BK-0042",
        [
            turn("tool_use", tool_use("cancel_booking", {"booking_id": "BK-0042"})),
            turn("end_turn", text("No existe esa reserva.")),
        ],
    )
    call = run.tool_calls[0]
    assert (call.ok, call.error, call.result) == (
        False,
        "unknown booking 'BK-0042'",
        {"error": "unknown booking 'BK-0042'"},
    )
    assert call.latency_ms == 200
    assert run.messages[2]["content"][0]["is_error"] is True
    assert (run.status, run.answer) == ("ok", "No existe esa reserva.")


def test_it_stops_with_an_error_when_the_script_runs_out():
    reset_state()
    run = run_reservo_agent(
        "¿Precio?", [turn("tool_use", tool_use("quote_room", {"room": "Focus", "tier": "pro", "hours": 1}))]
    )
    assert (run.status, run.answer) == ("error", None)
    assert "ran out after 1 turns" in run.error
    assert run.tools_called == ["quote_room"]
    assert run.latency_ms == 400 + 120
    assert run.input_tokens == pricing.count_tokens("¿Precio?")


def test_it_stops_with_an_error_at_an_unknown_tool_and_runs_nothing_after_it():
    reset_state()
    script = [
        turn(
            "tool_use",
            tool_use("check_price", {"room": "Focus"}),
            tool_use("book_room", {"room": "Focus", "tier": "pro", "hours": 1, "member": "Ana"}, "toolu_02"),
        ),
        turn("end_turn", text("Listo.")),
    ]
    run = run_reservo_agent("Reserva Focus", script)
    assert run.status == "error" and "unknown tool 'check_price'" in run.error
    assert run.tools_called == ["check_price"]
    assert (run.tool_calls[0].ok, run.tool_calls[0].latency_ms) == (False, 0)
    assert tools.STATE.bookings == {}
    assert run.latency_ms == 400


def test_it_runs_several_tool_calls_of_one_turn_in_order():
    reset_state()
    script = [
        turn(
            "tool_use",
            tool_use("quote_room", {"room": "Focus", "tier": "pro", "hours": 1}),
            tool_use("quote_room", {"room": "Studio", "tier": "pro", "hours": 1}, "toolu_02"),
        ),
        turn("end_turn", text("25,00 y 45,00 EUR.")),
    ]
    run = run_reservo_agent("Compara", script)
    assert [c.result["total_cents"] for c in run.tool_calls] == [2500, 4500]
    assert [c.start_offset_ms for c in run.tool_calls] == [400, 520]
    assert run.last_result("quote_room")["room"] == "Studio"
    assert len(run.messages[2]["content"]) == 2


@pytest.mark.parametrize("stop_reason", ["pause_turn", "tool_use"])
def test_it_continues_through_a_text_only_thinking_turn(stop_reason):
    reset_state()
    run = run_reservo_agent("Hola", [turn(stop_reason, text("Pienso.")), turn("end_turn", text("Hola."))])
    assert (run.status, run.answer, run.latency_ms) == ("ok", "Hola.", 800)
    assert run.tool_calls == []


def test_it_stops_with_an_error_on_any_other_stop_reason():
    reset_state()
    run = run_reservo_agent("Hola", [turn("max_tokens", text("Hol")), turn("end_turn", text("Hola."))])
    assert run.status == "error" and "'max_tokens'" in run.error
    assert len(run.turns) == 1


@pytest.mark.parametrize(
    "script",
    [
        "not a list",
        [{"content": []}],
        [{"stop_reason": "end_turn", "content": "Hola"}],
        [turn("end_turn", {"type": "image"})],
        [turn("tool_use", {"type": "tool_use", "name": "quote_room", "input": {}})],
        [turn("end_turn", text("Hola"), tool_use("quote_room", {"room": "Focus", "tier": "pro", "hours": 1}))],
    ],
)
def test_it_ends_a_malformed_script_with_an_error_instead_of_raising(script):
    reset_state()
    run = run_reservo_agent("Hola", script)
    assert run.status == "error" and run.answer is None and run.error


def test_it_joins_the_text_blocks_of_the_final_turn():
    reset_state()
    run = run_reservo_agent("Hola", [turn("end_turn", text("Uno."), text("Dos."))])
    assert run.answer == "Uno.\nDos."


def test_it_loads_without_django():
    code = "import sys, examples.reservo; sys.exit(any(m == 'django' or m.startswith('django.') for m in sys.modules))"
    root = Path(__file__).resolve().parents[2]
    assert subprocess.run([sys.executable, "-c", code], cwd=root).returncode == 0
