"""Field-level diffs of two runs' structured answers and tool-call arguments (pure, ``checks.field_diff``)."""

from checks.field_diff import MAX_CHANGES, answer_diff, change_text, field_diff, tool_calls_diff


def test_nested_objects_name_the_path_of_each_changed_field():
    old = {"order": {"items": [{"sku": "a", "qty": 3}], "note": "x"}}
    new = {"order": {"items": [{"sku": "a", "qty": 4}], "gift": True}}
    changes = field_diff(old, new)
    assert [change_text(c) for c in changes] == [
        "$.order.gift: added true",
        "$.order.items[0].qty: 3 → 4",
        '$.order.note: removed "x"',
    ]


def test_lists_of_different_lengths_add_or_remove_their_tail():
    assert [change_text(c) for c in field_diff({"items": [1, 2]}, {"items": [1, 2, 3, 4]})] == [
        "$.items[2]: added 3",
        "$.items[3]: added 4",
    ]
    assert [(c["path"], c["op"]) for c in field_diff([1, 2, 3], [1])] == [("$[1]", "removed"), ("$[2]", "removed")]


def test_a_type_change_is_one_change_at_its_path_not_a_walk_inside():
    changes = field_diff({"qty": 3, "when": {"day": 1}}, {"qty": "3", "when": [1]})
    assert [change_text(c) for c in changes] == ['$.qty: 3 → "3"', '$.when: {"day": 1} → [1]']
    assert field_diff({"ok": True}, {"ok": 1}) == [{"path": "$.ok", "op": "changed", "old": True, "new": 1}]


def test_equal_values_have_no_change_and_numbers_compare_by_value():
    assert field_diff({"a": [1, {"b": None}]}, {"a": [1.0, {"b": None}]}) == []
    assert answer_diff('{"a": 1}', {"a": 1}) == ("equal", [])
    assert answer_diff("same words", "same words") == ("equal", [])


def test_keys_that_are_not_names_are_quoted_in_the_path():
    assert field_diff({"a b": 1}, {"a b": 2})[0]["path"] == '$["a b"]'


def test_json_text_answers_are_read_as_json():
    kind, changes = answer_diff('{"total": 10, "items": [{"qty": 3}]}', '{"total": 12, "items": [{"qty": 4}]}')
    assert kind == "fields"
    assert [change_text(c) for c in changes] == ["$.items[0].qty: 3 → 4", "$.total: 10 → 12"]


def test_answers_that_are_not_json_fall_back_to_a_line_diff_or_changed():
    kind, lines = answer_diff("Booked room A.\nSee you.", "Booked room B.\nSee you.")
    assert kind == "text"
    assert lines == [("delete", "Booked room A."), ("insert", "Booked room B."), ("equal", "See you.")]
    assert answer_diff('{"broken": ', '{"a": 1}')[0] == "text"  # one side is not JSON: text
    assert answer_diff(3, 4) == ("changed", [])


def test_tool_calls_are_paired_in_order_and_only_changed_ones_listed():
    old = [{"name": "quote", "input": {"room": "A"}}, {"name": "book", "input": '{"room": "A", "h": 2}'}]
    new = [
        {"name": "quote", "input": {"room": "A"}},
        {"name": "book", "input": {"room": "A", "h": 3}},
        {"name": "email", "input": {}},
    ]
    rows = tool_calls_diff(old, new)
    assert [(r["index"], r["op"]) for r in rows] == [(2, "arguments"), (3, "added")]
    assert [change_text(c) for c in rows[0]["changes"]] == ["$.h: 2 → 3"]
    swapped = tool_calls_diff([{"name": "quote", "input": {}}], [{"name": "book", "input": {}}])
    assert swapped[0]["op"] == "tool" and (swapped[0]["old_name"], swapped[0]["new_name"]) == ("quote", "book")
    assert tool_calls_diff(new, old)[-1]["op"] == "removed"


def test_a_long_value_is_shortened_in_its_line():
    text = change_text({"path": "$.a", "op": "added", "old": None, "new": "x" * 500})
    assert len(text) < 140 and text.endswith("…")
    assert MAX_CHANGES >= 100
