"""tool_succeeded: the tool ran at least once with status ok and no error."""

from checks.scorers import resolve_config, run_from_payload, score_run, scorer_get

SCORER = scorer_get("tool_succeeded")


def _call(name, status="ok", error=None, span_id=None):
    return {"span_id": span_id or name, "kind": "tool", "name": name, "status": status, "error": error}


def _succeeded(spans, tool="book_room"):
    return score_run(SCORER, run_from_payload({"trace_id": "t1", "spans": spans}), {"tool": tool})


def test_it_passes_when_the_tool_ended_well():
    result = _succeeded([_call("book_room")])
    assert (result.passed, result.value) == (True, 1.0)
    assert result.detail == {
        "tool": "book_room",
        "calls": 1,
        "ok_calls": 1,
        "failed_calls": [],
        "actual_tools": ["book_room"],
    }


def test_it_passes_when_a_retry_ended_well_after_a_failure():
    result = _succeeded([_call("book_room", "error", "busy", "s1"), _call("book_room", span_id="s2")])
    assert result.passed
    assert result.reason == "book_room ended well in 1 of 2 call(s)"


def test_it_fails_when_every_call_failed():
    result = _succeeded([_call("book_room", "error", "room taken", "s1")])
    assert not result.passed
    assert result.reason == "every book_room call failed (1): room taken"
    assert result.detail["failed_calls"] == [{"span_id": "s1", "status": "error", "error": "room taken"}]


def test_it_fails_a_call_with_status_ok_but_an_error():
    assert not _succeeded([_call("book_room", "ok", "partial write")]).passed


def test_it_fails_when_the_tool_was_never_called():
    result = _succeeded([_call("quote_room")])
    assert (result.passed, result.value) == (False, 0.0)
    assert result.reason == "book_room was not called"


def test_it_does_not_count_a_non_tool_span_with_the_same_name():
    assert not _succeeded([{"span_id": "s1", "kind": "agent", "name": "book_room"}]).passed


def test_it_takes_the_tool_from_target_tool_or_the_last_expected_tool():
    run = run_from_payload(
        {"trace_id": "t1", "spans": [_call("quote_room")]}, expectations={"expected_tools": ["quote_room"]}
    )
    assert score_run(SCORER, run, resolve_config(SCORER, None, run)).passed


def test_it_abstains_not_configured_without_a_tool():
    run = run_from_payload({"trace_id": "t1"}, expectations={"contains": "x"})
    assert score_run(SCORER, run, resolve_config(SCORER, None, run)).reason == "not_configured"
