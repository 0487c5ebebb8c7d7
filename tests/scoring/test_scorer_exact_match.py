"""exact_match: the answer equals the expected answer."""

from checks.scorers import Abstain, resolve_config, run_from_payload, score_run, scorer_get

SCORER = scorer_get("exact_match")


def _match(output, expected):
    return score_run(SCORER, run_from_payload({"trace_id": "t1", "output": output}), {"expected": expected})


def test_it_passes_an_identical_string():
    result = _match("Focus pro 3h: 7500 cents", "Focus pro 3h: 7500 cents")
    assert (result.passed, result.value) == (True, 1.0)


def test_it_ignores_only_surrounding_whitespace_of_strings():
    assert _match("  7500 cents\n", "7500 cents").passed
    assert not _match("7500  cents", "7500 cents").passed


def test_it_is_case_sensitive():
    result = _match("focus", "Focus")
    assert not result.passed
    assert result.reason == "expected 'Focus', got 'focus'"
    assert result.detail == {"expected": "Focus", "actual": "focus"}


def test_it_compares_json_values_ignoring_key_order_but_not_list_order():
    assert _match({"room": "Focus", "hours": 3}, {"hours": 3, "room": "Focus"}).passed
    assert not _match(["a", "b"], ["b", "a"]).passed


def test_it_treats_a_whole_float_as_the_same_number_but_a_bool_as_different():
    assert _match(7500.0, 7500).passed
    assert not _match(True, 1).passed
    assert not _match(7500.5, 7500).passed


def test_it_parses_a_text_answer_that_holds_json_against_a_structured_expectation():
    assert _match('{"total_cents": 7500}', {"total_cents": 7500}).passed
    assert _match("7500", 7500).passed
    assert not _match('{"total_cents": 6000}', {"total_cents": 7500}).passed
    assert not _match("Focus", 7500).passed


def test_it_fails_a_run_with_no_answer():
    result = _match(None, "7500")
    assert not result.passed
    assert result.reason == "the run produced no answer"


def test_it_passes_a_null_answer_when_null_is_explicitly_expected():
    assert _match(None, None).passed


def test_it_abstains_when_there_is_no_expected_answer():
    run = run_from_payload({"trace_id": "t1", "output": "x"}, expectations={}, has_case=True)
    config = resolve_config(SCORER, None, run)
    assert config is None
    assert score_run(SCORER, run, config).reason == "no_expected_output"
    assert SCORER.func(run, {}) == Abstain("no_expected_output", {"message": "no expected answer to compare with"})


def test_it_uses_the_cases_expected_output():
    run = run_from_payload({"trace_id": "t1", "output": "7500"}, expected_output="7500")
    assert score_run(SCORER, run, resolve_config(SCORER, {"expected": "6000"}, run)).passed


def test_it_keeps_long_values_short_in_the_detail():
    result = _match("x" * 1000, "y")
    assert result.detail["actual"] == "x" * 200 + "…"
