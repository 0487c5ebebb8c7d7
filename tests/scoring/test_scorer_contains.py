"""contains: the answer contains a required string (case-sensitive)."""

from checks.scorers import resolve_config, run_from_payload, score_run, scorer_get

SCORER = scorer_get("contains")


def _contains(output, value):
    return score_run(SCORER, run_from_payload({"trace_id": "t1", "output": output}), {"value": value})


def test_it_passes_when_the_answer_contains_the_string():
    result = _contains("Your quote: 7500 cents for Focus.", "7500 cents")
    assert (result.passed, result.value) == (True, 1.0)
    assert result.reason == "the answer contains '7500 cents'"


def test_it_fails_a_near_miss_that_differs_in_case_or_spacing():
    assert not _contains("Your quote: 7500 Cents", "7500 cents").passed
    assert not _contains("Your quote: 7500cents", "7500 cents").passed


def test_it_fails_a_run_with_no_answer():
    result = _contains("   ", "7500")
    assert not result.passed
    assert result.reason == "the run produced no answer"


def test_it_finds_a_number_inside_a_structured_answer():
    assert _contains({"total_cents": 7500}, "7500").passed
    assert not _contains({"total_cents": 6000}, "7500").passed


def test_it_finds_text_with_quotes_inside_a_string_of_a_structured_answer():
    assert _contains({"message": 'Room "Focus" booked'}, '"Focus" booked').passed


def test_it_reads_the_required_string_from_the_case():
    run = run_from_payload({"trace_id": "t1", "output": "Reservé Focus"}, expectations={"contains": "Focus"})
    assert score_run(SCORER, run, resolve_config(SCORER, None, run)).passed


def test_it_abstains_not_configured_without_a_string_to_look_for():
    run = run_from_payload({"trace_id": "t1", "output": "x"}, expectations={}, has_case=True)
    assert score_run(SCORER, run, resolve_config(SCORER, None, run)).reason == "not_configured"


def test_it_takes_several_values_all_of_them_by_default_or_any_one():
    run = run_from_payload({"trace_id": "t1", "output": "Focus booked for Ana"})
    assert score_run(SCORER, run, {"value": ["Focus", "Ana"]}).passed
    result = score_run(SCORER, run, {"value": ["Focus", "Bob"]})
    assert (result.passed, result.reason, result.detail["missing"]) == (
        False,
        "the answer does not contain 'Bob'",
        ["Bob"],
    )
    assert score_run(SCORER, run, {"value": ["Bob", "Ana"], "mode": "any"}).passed
    assert not score_run(SCORER, run, {"value": ["Bob", "Eve"], "mode": "any"}).passed


def test_answer_check_contains_looks_for_the_expected_answer_when_no_value_is_given():
    run = run_from_payload(
        {"trace_id": "t1", "output": "Total: 75.00 EUR"},
        expected_output="75.00 EUR",
        expectations={"answer_check": "contains"},
    )
    assert resolve_config(SCORER, None, run) == {"value": "75.00 EUR"}
    assert score_run(SCORER, run, resolve_config(SCORER, None, run)).passed
