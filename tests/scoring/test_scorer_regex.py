"""regex: the answer matches a user's pattern, run by RE2 in linear time (seed 003)."""

import time

import pytest

from checks.scorers import config_validate, resolve_config, run_from_payload, score_run, scorer_get
from checks.scorers.patterns import PatternError, pattern_compile

SCORER = scorer_get("regex")


def _regex(output, **config):
    return score_run(SCORER, run_from_payload({"trace_id": "t", "output": output}), config)


def test_it_passes_an_answer_the_pattern_finds_and_fails_one_it_does_not():
    assert _regex("Total: 75.00 EUR", pattern=r"\d+\.\d{2} EUR").passed
    result = _regex("Total: 75 EUR", pattern=r"\d+\.\d{2} EUR")
    assert not result.passed
    assert result.reason == "the answer does not match '\\\\d+\\\\.\\\\d{2} EUR'"


def test_flags_ignore_case_and_let_dot_cross_lines():
    assert not _regex("TOTAL", pattern="total").passed
    assert _regex("TOTAL", pattern="total", flags="i").passed
    assert _regex("a\nb", pattern="a.b", flags="s").passed
    assert _regex("x\nend", pattern="^end$", flags="m").passed


def test_negate_passes_when_the_pattern_is_absent():
    assert _regex("all good", pattern="(?i)sorry", negate=True).passed
    result = _regex("Sorry, I cannot", pattern="(?i)sorry", negate=True)
    assert not result.passed and "must not" in result.reason


def test_it_searches_every_string_of_a_structured_answer_and_fails_no_answer():
    result = _regex({"note": "booking b-12 done"}, pattern=r"b-\d+")
    assert result.passed and result.detail["matched_at"] == ["$.note"]
    assert _regex("  ", pattern="x").reason == "the run produced no answer"


def test_a_catastrophic_pattern_finishes_at_once():
    started = time.monotonic()
    assert not _regex("a" * 100_000 + "!", pattern="^(a+)+$").passed
    assert time.monotonic() - started < 2  # a backtracking engine would not finish


@pytest.mark.parametrize("pattern", [r"(a)\1", r"(?<=a)b", r"a(?!b)"])
def test_a_pattern_re2_cannot_run_is_refused_with_the_reason(pattern):
    with pytest.raises(PatternError) as exc:
        pattern_compile(pattern)
    assert "linear time (RE2)" in str(exc.value)
    assert config_validate(SCORER, {"pattern": pattern})[0].startswith("regex.pattern: is not a pattern")


def test_it_reads_the_pattern_from_the_case_as_a_string_or_an_object():
    run = run_from_payload({"trace_id": "t", "output": "EUR 75"}, expectations={"output_regex": "^EUR"})
    assert score_run(SCORER, run, resolve_config(SCORER, None, run)).passed
    run = run_from_payload(
        {"trace_id": "t", "output": "EUR 75"}, expectations={"output_regex": {"pattern": "^eur", "flags": "i"}}
    )
    assert score_run(SCORER, run, resolve_config(SCORER, None, run)).passed
