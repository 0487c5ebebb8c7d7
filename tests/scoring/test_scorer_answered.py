"""answered: the run produced a non-empty answer (the shared definition of "no answer")."""

import pytest

from checks.scorers import run_from_payload, score_run, scorer_get


def _answered(output):
    return score_run(scorer_get("answered"), run_from_payload({"trace_id": "t1", "output": output}), {})


@pytest.mark.parametrize("output", [None, "", "   ", "\n\t ", [], {}])
def test_it_fails_a_run_with_no_answer(output):
    result = _answered(output)
    assert (result.passed, result.value) == (False, 0.0)
    assert result.reason == "the run produced no answer"


@pytest.mark.parametrize("output", [0, False, "0", " x ", [None], {"a": None}, 0.0])
def test_it_counts_zero_false_and_the_text_zero_as_answers(output):
    result = _answered(output)
    assert (result.passed, result.value) == (True, 1.0)


def test_it_reports_the_kind_and_length_of_the_answer():
    assert _answered("Booked Focus.").detail == {"answer_type": "string", "length": 13}
    assert _answered({"total": 1}).detail == {"answer_type": "object"}
    assert _answered(0).detail == {"answer_type": "number"}
