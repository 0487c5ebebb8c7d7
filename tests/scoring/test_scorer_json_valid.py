"""json_valid: the answer parses as JSON and, given a schema, validates against it."""

from checks.scorers import Abstain, resolve_config, run_from_payload, score_run, scorer_get

SCORER = scorer_get("json_valid")
QUOTE_SCHEMA = {
    "type": "object",
    "required": ["room", "total_cents"],
    "properties": {"room": {"type": "string"}, "total_cents": {"type": "integer", "minimum": 0}},
}


def _valid(output, config=None):
    return score_run(SCORER, run_from_payload({"trace_id": "t1", "output": output}), config or {})


def test_it_passes_a_string_answer_that_holds_json():
    result = _valid('{"room": "Focus", "total_cents": 7500}')
    assert (result.passed, result.value) == (True, 1.0)
    assert result.detail == {"schema_checked": False}


def test_it_fails_prose_and_almost_json():
    assert not _valid("Focus, 7500 cents").passed
    result = _valid('{"room": "Focus",}')
    assert not result.passed
    assert result.reason.startswith("the answer is not JSON: ")
    assert result.detail["errors"][0]["path"] == "$"


def test_it_refuses_nan_which_is_not_json():
    assert not _valid('{"total": NaN}').passed


def test_it_accepts_a_structured_answer_as_json_already():
    assert _valid({"room": "Focus"}).passed
    assert _valid(7500).passed


def test_it_fails_a_run_with_no_answer():
    assert _valid(None).reason == "the run produced no answer"
    assert not _valid("  ").passed


def test_it_validates_against_a_schema_and_lists_every_error_with_its_path():
    result = _valid('{"room": 7, "total_cents": -5}', {"schema": QUOTE_SCHEMA})
    assert not result.passed
    assert [(e["path"], e["validator"]) for e in result.detail["errors"]] == [
        ("$.room", "type"),
        ("$.total_cents", "minimum"),
    ]
    assert result.reason == "$.room: 7 is not of type 'string' (and 1 more)"
    assert result.detail["schema_checked"] is True


def test_it_reports_a_missing_required_field():
    result = _valid({"room": "Focus"}, {"schema": QUOTE_SCHEMA})
    assert result.detail["errors"] == [
        {"path": "$", "message": "'total_cents' is a required property", "validator": "required"}
    ]


def test_it_passes_an_answer_matching_the_schema():
    result = _valid({"room": "Focus", "total_cents": 7500}, {"schema": QUOTE_SCHEMA})
    assert result.passed
    assert result.detail == {"schema_checked": True, "errors": []}


def test_it_reads_the_schema_from_the_cases_output_schema():
    run = run_from_payload(
        {"trace_id": "t1", "output": {"room": "Focus"}}, expectations={"output_schema": QUOTE_SCHEMA}
    )
    assert not score_run(SCORER, run, resolve_config(SCORER, None, run)).passed


def test_it_abstains_on_an_invalid_schema_instead_of_failing_the_answer():
    result = _valid({"room": "Focus"}, {"schema": {"type": "objekt"}})
    assert isinstance(result, Abstain)
    assert result.reason == "invalid_schema"


def _case_run(output, expected, **expectations):
    return run_from_payload(
        {"trace_id": "t1", "output": output},
        expected_output=expected,
        expectations={"answer_check": "json", **expectations},
    )


def _scored(run):
    return score_run(SCORER, run, resolve_config(SCORER, None, run))


def test_it_fails_a_json_answer_that_differs_from_the_expected_answer():
    result = _scored(_case_run('{"booking_id": "BK-0002"}', {"booking_id": "BK-0001"}))
    assert not result.passed
    assert result.reason == "$.booking_id: expected 'BK-0001', got 'BK-0002'"
    assert result.detail["answer_compared"] is True and result.detail["category"] == "output"


def test_it_passes_a_json_answer_equal_to_an_expected_answer_written_as_text():
    assert _scored(_case_run({"total_cents": 7500.0, "room": "Focus"}, '{"room": "Focus", "total_cents": 7500}')).passed


def test_it_fails_a_json_answer_with_a_key_the_expected_answer_does_not_have():
    result = _scored(_case_run({"room": "Focus", "vip": True}, {"room": "Focus"}))
    assert not result.passed and result.detail["mismatches"] == [{"path": "$.vip", "message": "unexpected key"}]


def test_it_applies_the_matchers_of_the_expected_answer():
    expected = {"booking_id": {"$regex": "^BK-\\d{4}$"}, "total": {"$approx": 75, "tol": 0.01}}
    assert _scored(_case_run({"booking_id": "BK-0042", "total": 75.001}, expected)).passed
    assert not _scored(_case_run({"booking_id": "bk-42", "total": 75.001}, expected)).passed


def test_it_checks_the_schema_before_comparing():
    result = _scored(_case_run({"room": 7}, {"room": "Focus"}, output_schema=QUOTE_SCHEMA))
    assert not result.passed and result.detail["errors"] and "mismatches" not in result.detail
