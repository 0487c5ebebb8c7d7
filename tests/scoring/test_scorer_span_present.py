"""span_present: some span has the required kind and/or name."""

from checks.scorers import resolve_config, run_from_payload, score_run, scorer_get

SCORER = scorer_get("span_present")
SPANS = [
    {"span_id": "s1", "kind": "llm", "name": "model_call"},
    {"span_id": "s2", "kind": "tool", "name": "quote_room"},
    {"span_id": "s3", "kind": "retrieval", "name": "rooms_index"},
]


def _present(config, spans=SPANS):
    return score_run(SCORER, run_from_payload({"trace_id": "t1", "spans": spans}), config)


def test_it_passes_when_a_span_of_the_kind_exists():
    result = _present({"kind": "retrieval"})
    assert (result.passed, result.value) == (True, 1.0)
    assert result.detail == {"required": {"kind": "retrieval"}, "matching_spans": ["s3"], "span_count": 3}


def test_it_fails_when_no_span_has_the_kind():
    result = _present({"kind": "agent"})
    assert not result.passed
    assert result.reason == "no span with kind='agent' among 3 span(s)"


def test_it_matches_a_name_exactly_and_case_sensitively():
    assert _present({"name": "quote_room"}).passed
    assert not _present({"name": "Quote_room"}).passed
    assert not _present({"name": "quote"}).passed


def test_it_requires_both_kind_and_name_on_the_same_span():
    assert _present({"kind": "tool", "name": "quote_room"}).passed
    assert not _present({"kind": "llm", "name": "quote_room"}).passed


def test_it_fails_a_run_without_spans():
    assert not _present({"kind": "llm"}, spans=[]).passed


def test_it_takes_the_requirement_from_the_cases_required_span():
    run = run_from_payload({"trace_id": "t1", "spans": SPANS}, expectations={"required_span": {"name": "rooms_index"}})
    assert resolve_config(SCORER, {"kind": "agent"}, run) == {"name": "rooms_index"}
    assert score_run(SCORER, run, resolve_config(SCORER, None, run)).passed


def test_it_abstains_with_an_empty_requirement():
    assert _present({}).reason == "not_configured"
