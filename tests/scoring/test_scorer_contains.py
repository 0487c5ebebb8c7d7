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
