"""no_tool_loop: no tool called twice with the same canonical JSON input."""

from checks.scorers import run_from_payload, score_run, scorer_get


def _loop(*calls):
    spans = [{"span_id": f"s{i}", "kind": "tool", "name": name, "input": inp} for i, (name, inp) in enumerate(calls)]
    return score_run(scorer_get("no_tool_loop"), run_from_payload({"trace_id": "t1", "spans": spans}), {})


def test_it_passes_calls_with_different_inputs():
    result = _loop(("quote_room", {"room": "Focus", "hours": 3}), ("quote_room", {"room": "Focus", "hours": 2}))
    assert (result.passed, result.value) == (True, 1.0)
    assert result.detail == {"repeats": [], "tool_calls": 2}


def test_it_fails_the_same_tool_with_the_same_input_and_names_both():
    result = _loop(
        ("quote_room", {"room": "Focus"}), ("book_room", {"room": "Focus"}), ("quote_room", {"room": "Focus"})
    )
    assert (result.passed, result.value) == (False, 0.0)
    assert result.detail["repeats"] == [
        {"tool": "quote_room", "input": {"room": "Focus"}, "calls": 2, "span_ids": ["s0", "s2"]}
    ]
    assert result.reason == 'quote_room called 2 times with the same input {"room":"Focus"}'


def test_it_compares_inputs_regardless_of_key_order_and_whole_floats():
    assert not _loop(
        ("quote_room", {"room": "Focus", "hours": 3}), ("quote_room", {"hours": 3.0, "room": "Focus"})
    ).passed


def test_it_parses_a_string_input_that_holds_json():
    assert not _loop(
        ("quote_room", '{"hours": 3, "room": "Focus"}'), ("quote_room", {"room": "Focus", "hours": 3})
    ).passed


def test_it_does_not_count_the_same_input_to_two_different_tools():
    assert _loop(("quote_room", {"room": "Focus"}), ("book_room", {"room": "Focus"})).passed


def test_it_does_not_confuse_a_number_with_the_same_text():
    assert _loop(("lookup", {"id": 7}), ("lookup", {"id": "7"})).passed


def test_it_counts_two_calls_without_input_as_a_repeat():
    assert not _loop(("list_rooms", None), ("list_rooms", None)).passed


def test_it_ignores_repeated_non_tool_spans():
    spans = [{"span_id": f"s{i}", "kind": "llm", "name": "model_call", "input": "same"} for i in range(2)]
    assert score_run(scorer_get("no_tool_loop"), run_from_payload({"trace_id": "t1", "spans": spans}), {}).passed
