"""tool_calls: the calls made, with their arguments, against the expected calls (every mode and matcher)."""

import pytest

from checks.scorers import config_validate, resolve_config, run_from_payload, score_run, scorer_get
from checks.scorers.tool_calls import tool_call_mismatches

SCORER = scorer_get("tool_calls")
QUOTE = {"name": "quote_room", "args": {"room": "Focus", "tier": "pro", "hours": 3}}
BOOK = {"name": "book_room", "args": {"room": "Focus", "member": "Ana"}}
CANCEL = {"name": "cancel_booking", "args": {"booking_id": "b-1"}}


def _run(*calls):
    spans = [
        {"span_id": f"s{i}", "kind": "tool", "name": c["name"], "input": c.get("args", {}), "latency_ms": i}
        for i, c in enumerate(calls)
    ]
    return run_from_payload({"trace_id": "t", "output": "done", "spans": spans})


def _check(run, expected, **modes):
    return score_run(SCORER, run, {"expected_tool_calls": expected, **modes})


def _mismatches(actual, expected, mode="strict", args_mode="subset"):
    return tool_call_mismatches(expected, actual, mode=mode, args_mode=args_mode)


def test_it_passes_the_same_calls_in_the_same_order():
    result = _check(_run(QUOTE, BOOK), [QUOTE, BOOK])
    assert (result.passed, result.value) == (True, 1.0)
    assert result.detail["actual_calls"] == [QUOTE, BOOK]


def test_it_names_a_wrong_argument_first_in_words():
    wrong = {"name": "book_room", "args": {"room": "Focus", "member": "Anna"}}
    result = _check(_run(QUOTE, wrong), [QUOTE, BOOK])
    assert not result.passed
    assert result.reason == "book_room.member: expected 'Ana', got 'Anna'"
    assert result.detail["mismatches"] == ["book_room.member: expected 'Ana', got 'Anna'"]
    assert result.detail["actual_calls"][1] == wrong


def test_strict_reports_missing_unexpected_and_out_of_order_calls():
    assert _mismatches([QUOTE], [QUOTE, CANCEL]) == ["missing call cancel_booking"]
    assert _mismatches([QUOTE, BOOK], [QUOTE]) == ["unexpected call book_room"]
    assert _mismatches([BOOK, QUOTE], [QUOTE, BOOK]) == [
        "call 1: expected call quote_room, got book_room",
        "call 2: expected call book_room, got quote_room",
    ]


def test_it_keeps_every_mismatch_and_counts_the_rest_in_the_reason():
    wrong = {"name": "book_room", "args": {"room": "Studio", "member": "Anna"}}
    result = _check(_run(wrong), [BOOK, CANCEL])
    assert result.detail["mismatches"] == [
        "book_room.room: expected 'Focus', got 'Studio'",
        "book_room.member: expected 'Ana', got 'Anna'",
        "missing call cancel_booking",
    ]
    assert result.reason == "book_room.room: expected 'Focus', got 'Studio' (and 2 more)"


@pytest.mark.parametrize(
    ("actual", "mode", "expected_mismatches"),
    [
        ([BOOK, QUOTE], "unordered", []),
        ([BOOK, QUOTE, CANCEL], "unordered", ["unexpected call cancel_booking"]),
        ([BOOK], "unordered", ["missing call quote_room"]),
        ([CANCEL, BOOK, QUOTE], "superset", []),
        ([BOOK], "superset", ["missing call quote_room"]),
        ([BOOK], "subset", []),
        ([BOOK, CANCEL], "subset", ["unexpected call cancel_booking"]),
        ([QUOTE, BOOK], "subset", []),
    ],
)
def test_each_sequence_mode_compares_the_calls_as_its_name_says(actual, mode, expected_mismatches):
    assert _mismatches(actual, [QUOTE, BOOK], mode) == expected_mismatches


def test_without_order_a_wrong_argument_is_named_rather_than_a_missing_call():
    wrong = {"name": "book_room", "args": {"room": "Focus", "member": "Anna"}}
    assert _mismatches([wrong, QUOTE], [QUOTE, BOOK], "unordered") == ["book_room.member: expected 'Ana', got 'Anna'"]
    assert _mismatches([wrong], [BOOK], "subset") == ["book_room.member: expected 'Ana', got 'Anna'"]


def test_without_order_the_pairing_finds_a_match_that_greedy_pairing_misses():
    anyone = {"name": "book_room", "args": {"member": {"$any": True}}}
    ana = {"name": "book_room", "args": {"member": "Ana"}}
    bob = {"name": "book_room", "args": {"member": "Bob"}}
    assert _mismatches([ana, bob], [anyone, ana], "unordered") == []


def test_args_subset_allows_extra_arguments_exact_refuses_them_ignore_reads_names_only():
    extra = {"name": "book_room", "args": {"room": "Focus", "member": "Ana", "vip": True}}
    assert _mismatches([extra], [BOOK]) == []
    assert _mismatches([extra], [BOOK], args_mode="exact") == ["book_room.vip: unexpected argument"]
    other = {"name": "book_room", "args": {"room": "Studio"}}
    assert _mismatches([other], [BOOK], args_mode="ignore") == []
    assert _mismatches([other], [BOOK]) == [
        "book_room.room: expected 'Focus', got 'Studio'",
        "book_room.member: missing (expected 'Ana')",
    ]


@pytest.mark.parametrize(
    ("matcher", "value", "mismatch"),
    [
        ({"$regex": "^ana@acme\\.com$"}, "ana@acme.com", None),
        (
            {"$regex": "^ana@acme\\.com$"},
            "ana@evil.com",
            "expected a match of '^ana@acme\\\\.com$', got 'ana@evil.com'",
        ),
        ({"$regex": "^ANA", "flags": "i"}, "ana", None),
        ({"$regex": "ana"}, 42, "expected a match of 'ana', got 42"),
        ({"$approx": 3.0, "tol": 0.01}, 3.004, None),
        ({"$approx": 3.0, "tol": 0.01}, 4, "expected 3.0 (±0.01), got 4"),
        ({"$approx": 3}, True, "expected 3 (±1e-09), got True"),
        ({"$in": ["Focus", "Studio"]}, "Studio", None),
        ({"$in": ["Focus", "Studio"]}, "Boardroom", "expected one of ['Focus', 'Studio'], got 'Boardroom'"),
        ({"$any": True}, None, None),
        (3, 3.0, None),
        ("3", 3, "expected '3', got 3"),
    ],
)
def test_each_matcher_accepts_what_it_describes_and_names_what_it_refuses(matcher, value, mismatch):
    expected = [{"name": "quote_room", "args": {"x": matcher}}]
    found = _mismatches([{"name": "quote_room", "args": {"x": value}}], expected)
    assert found == ([] if mismatch is None else [f"quote_room.x: {mismatch}"])


def test_an_expected_argument_that_is_absent_is_missing_even_for_any():
    assert _mismatches(
        [{"name": "quote_room", "args": {}}], [{"name": "quote_room", "args": {"x": {"$any": True}}}]
    ) == ["quote_room.x: missing (expected any value)"]


def test_matchers_apply_at_any_depth_of_objects_and_lists():
    expected = [{"name": "book_room", "args": {"guest": {"name": {"$regex": "^An"}, "tags": ["vip", {"$in": [1, 2]}]}}}]
    good = {"name": "book_room", "args": {"guest": {"name": "Ana", "tags": ["vip", 2], "age": 30}}}
    bad = {"name": "book_room", "args": {"guest": {"name": "Bo", "tags": ["vip", 3]}}}
    assert _mismatches([good], expected) == []
    assert _mismatches([bad], expected) == [
        "book_room.guest.name: expected a match of '^An', got 'Bo'",
        "book_room.guest.tags[1]: expected one of [1, 2], got 3",
    ]
    assert _mismatches([good], expected, args_mode="exact") == ["book_room.guest.age: unexpected argument"]


def test_arguments_sent_as_a_json_string_are_read_as_json():
    run = run_from_payload(
        {
            "trace_id": "t",
            "spans": [{"span_id": "a", "kind": "tool", "name": "book_room", "input": '{"member": "Ana"}'}],
        }
    )
    assert _check(run, [{"name": "book_room", "args": {"member": "Ana"}}]).passed


def test_it_reads_the_expected_calls_and_modes_from_the_case():
    run = run_from_payload(
        {"trace_id": "t", "spans": [{"span_id": "a", "kind": "tool", "name": "book_room", "input": BOOK["args"]}]},
        expectations={"expected_tool_calls": [QUOTE, BOOK], "tool_calls_match": "subset"},
    )
    config = resolve_config(SCORER, None, run)
    assert config == {"expected_tool_calls": [QUOTE, BOOK], "tool_calls_match": "subset", "args_match": "subset"}
    assert score_run(SCORER, run, config).passed


def test_a_matcher_that_cannot_run_is_a_config_problem_naming_its_path():
    config = {"expected_tool_calls": [{"name": "a", "args": {"x": {"$regex": "(a)\\1"}, "y": {"$approx": "3"}}}]}
    problems = config_validate(SCORER, config)
    assert problems[0].startswith("tool_calls.expected_tool_calls[0].args.x.$regex: is not a pattern")
    assert problems[1] == "tool_calls.expected_tool_calls[0].args.y: $approx takes a number and a tol of 0 or more"
