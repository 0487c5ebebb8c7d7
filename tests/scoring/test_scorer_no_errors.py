"""no_errors: no span failed (status error or a non-empty error) and the run did not fail."""

from checks.scorers import run_from_payload, score_run, scorer_get


def _no_errors(spans=(), **fields):
    run = run_from_payload({"trace_id": "t1", "spans": list(spans), **fields})
    return score_run(scorer_get("no_errors"), run, {})


def test_it_passes_a_run_whose_spans_all_ended_well():
    result = _no_errors([{"span_id": "s1", "kind": "tool", "name": "quote_room", "status": "ok"}])
    assert (result.passed, result.value) == (True, 1.0)
    assert result.detail == {"failed_spans": [], "run_status": "ok", "run_error": None}


def test_it_fails_a_span_with_status_error():
    result = _no_errors([{"span_id": "s1", "kind": "tool", "name": "book_room", "status": "error"}])
    assert not result.passed
    assert result.detail["failed_spans"] == [
        {"span_id": "s1", "name": "book_room", "kind": "tool", "status": "error", "error": None}
    ]
    assert result.reason == "1 failed span(s), first book_room: status error"


def test_it_fails_a_span_that_says_ok_but_carries_an_error():
    result = _no_errors([{"span_id": "s1", "name": "book_room", "status": "ok", "error": "room taken"}])
    assert not result.passed
    assert result.reason == "1 failed span(s), first book_room: room taken"


def test_it_ignores_a_blank_error_on_an_ok_span():
    assert _no_errors([{"span_id": "s1", "status": "ok", "error": "  "}]).passed
    assert _no_errors([{"span_id": "s1", "status": "ok", "error": ""}]).passed


def test_it_fails_a_run_whose_own_status_is_error_even_without_spans():
    result = _no_errors([], status="error", error="timeout after 30 s")
    assert not result.passed
    assert result.reason == "the run failed: timeout after 30 s"
    assert result.detail["run_status"] == "error"


def test_it_fails_a_run_that_carries_an_error_message():
    assert not _no_errors([], status="ok", error="partial answer").passed


def test_it_lists_every_failed_span():
    spans = [
        {"span_id": "s1", "status": "error", "error": "a"},
        {"span_id": "s2", "status": "ok"},
        {"span_id": "s3", "status": "error", "error": "b"},
    ]
    assert [s["span_id"] for s in _no_errors(spans).detail["failed_spans"]] == ["s1", "s3"]
