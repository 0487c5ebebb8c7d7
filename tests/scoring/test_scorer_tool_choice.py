"""tool_choice: the tools called match expected_tools under tool_match (default exact)."""

import pytest

from checks.scorers import resolve_config, run_from_payload, score_run, scorer_get

SCORER = scorer_get("tool_choice")


def _run(*tools, expectations=None):
    spans = [{"span_id": f"s{i}", "kind": "tool", "name": name} for i, name in enumerate(tools)]
    spans.insert(0, {"span_id": "llm", "kind": "llm", "name": "model_call"})
    return run_from_payload({"trace_id": "t1", "spans": spans}, expectations=expectations)


def _choice(actual, expected, mode=None):
    config = {"expected_tools": expected} if mode is None else {"expected_tools": expected, "tool_match": mode}
    return score_run(SCORER, _run(*actual), config)


def test_it_fails_the_seeds_regression_with_the_seeds_evidence():
    run = _run("book_room", expectations={"expected_tools": ["quote_room"]})
    result = score_run(SCORER, run, resolve_config(SCORER, None, run))
    assert (result.passed, result.value) == (False, 0.0)
    assert result.reason == "expected ['quote_room'], called ['book_room']"
    assert result.detail == {
        "actual_tools": ["book_room"],
        "expected_tools": ["quote_room"],
        "tool_match": "exact",
        "missing": ["quote_room"],
        "extra": ["book_room"],
    }


def test_it_passes_the_seeds_clean_case():
    result = _choice(["book_room", "cancel_booking"], ["book_room", "cancel_booking"])
    assert (result.passed, result.value) == (True, 1.0)


# (actual, expected, passes) per mode; every mode has near misses.
CASES = {
    "exact": [
        (["a", "b"], ["a", "b"], True),
        (["b", "a"], ["a", "b"], False),
        (["a", "b", "c"], ["a", "b"], False),
        (["a", "a", "b"], ["a", "b"], False),
        ([], [], True),
        (["a"], [], False),
    ],
    "in_order": [
        (["a", "x", "b"], ["a", "b"], True),
        (["a", "b"], ["a", "b"], True),
        (["b", "a"], ["a", "b"], False),
        (["a", "x"], ["a", "b"], False),
        (["a", "b"], ["a", "a"], False),
        (["a", "x", "a"], ["a", "a"], True),
        (["x"], [], True),
    ],
    "any_order": [
        (["b", "a"], ["a", "b"], True),
        (["a", "b", "a"], ["a", "b"], False),
        (["a", "b", "c"], ["a", "b"], False),
        (["a"], ["a", "b"], False),
        (["b", "a", "a"], ["a", "a", "b"], True),
    ],
    "superset": [
        (["x", "b", "y", "a"], ["a", "b"], True),
        (["a", "a", "b"], ["a", "b"], True),
        (["a", "x"], ["a", "b"], False),
        ([], ["a"], False),
        (["x"], [], True),
    ],
}


@pytest.mark.parametrize(
    ("mode", "actual", "expected", "passes"),
    [(mode, *case) for mode, cases in CASES.items() for case in cases],
)
def test_it_applies_each_tool_match_mode(mode, actual, expected, passes):
    result = _choice(actual, expected, mode)
    assert result.passed is passes
    assert result.detail["tool_match"] == mode


def test_it_names_the_mode_in_the_reason_when_not_exact():
    result = _choice(["b", "a"], ["a", "b"], "in_order")
    assert result.reason == "expected ['a', 'b'] (in_order), called ['b', 'a']"


def test_it_defaults_to_exact_when_the_case_gives_no_tool_match():
    run = _run("b", "a", expectations={"expected_tools": ["a", "b"]})
    config = resolve_config(SCORER, None, run)
    assert config["tool_match"] == "exact"
    assert not score_run(SCORER, run, config).passed


def test_it_uses_the_cases_tool_match():
    run = _run("b", "a", expectations={"expected_tools": ["a", "b"], "tool_match": "any_order"})
    assert score_run(SCORER, run, resolve_config(SCORER, None, run)).passed


def test_it_abstains_on_an_unknown_mode_instead_of_guessing():
    assert _choice(["a"], ["a"], "fuzzy").reason == "invalid_config"


def test_it_abstains_not_configured_when_the_case_expects_no_tool_list():
    run = _run("a", expectations={"contains": "x"})
    assert score_run(SCORER, run, resolve_config(SCORER, None, run)).reason == "not_configured"


@pytest.mark.parametrize(
    ("actual", "expected", "missing", "extra"),
    [
        ([], ["a", "b", "a"], ["a", "a", "b"], []),
        (["c", "a", "c", "d"], ["a", "b", "a"], ["a", "b"], ["c", "c", "d"]),
        (["b", "a", "b"], ["a", "b"], [], ["b"]),
        (["b", "a"], ["a", "b"], [], []),
    ],
)
def test_it_lists_the_calls_missing_and_extra_counted_with_repeats_grouped_by_first_appearance(
    actual, expected, missing, extra
):
    detail = _choice(actual, expected, "any_order").detail
    assert (detail["missing"], detail["extra"]) == (missing, extra)


@pytest.mark.parametrize(
    ("mode", "reason"),
    [
        ("exact", "called ['a', 'b'], as expected ['a', 'b']"),
        ("in_order", "called ['a', 'b'], as expected ['a', 'b'] (in_order)"),
        ("superset", "called ['a', 'b'], as expected ['a', 'b'] (superset)"),
    ],
)
def test_a_passing_run_names_the_calls_and_the_expectation(mode, reason):
    result = _choice(["a", "b"], ["a", "b"], mode)
    assert (result.passed, result.reason, result.detail["missing"], result.detail["extra"]) == (True, reason, [], [])
