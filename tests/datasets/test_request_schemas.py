"""The request schemas the API publishes say what the rules accept: the same bodies pass both.

The rules (``datasets.case_validation``, ``datasets.capture``) validate every door; the
OpenAPI description of the bodies is built from the same limits. These examples hold
the two together at each edge, so neither can drift alone.
"""

import pytest
from jsonschema import Draft202012Validator

from datasets.capture import CAPTURE_REQUEST_SCHEMA, _capture_request_clean
from datasets.case_validation import (
    CASE_EDITABLE_FIELDS,
    DATASET_REQUEST_SCHEMA,
    NOTES_MAX,
    case_fields_check,
    case_request_schema,
    dataset_fields_clean,
)
from evalsite.errors import Invalid

CASE_BODIES = [
    {"name": "quote_focus"},
    {"name": ""},
    {"name": "x" * 200},
    {"name": "x" * 201},
    {},
    {"name": "ok", "notes": "x" * NOTES_MAX},
    {"name": "ok", "notes": "x" * (NOTES_MAX + 1)},
    {"name": "ok", "notes": None},
    {"name": "ok", "notes": 3},
    {"name": "ok", "status": "draft"},
    {"name": "ok", "status": "weird"},
    {"name": "ok", "metadata": {"a": 1}},
    {"name": "ok", "metadata": [1]},
    {"name": "ok", "nme": "typo"},
    {"name": "ok", "expectations": {"expected_tools": ["quote_room"], "tool_match": "exact"}},
    {"name": "ok", "expectations": {"expected_tool": ["quote_room"]}},
    {"name": "ok", "expectations": {"latency_threshold_ms": -1}},
    {"name": "ok", "expectations": None},
    {"name": "ok", "input": {"q": [1, 2]}, "expected_output": "75.00 EUR"},
    {"name": "ok", "source_trace_id": ""},
    {"name": "ok", "source_trace_id": "run-42"},
    {"name": "ok", "source_trace_id": "r" * 201},
]


def _schema_accepts(schema, body):
    return Draft202012Validator(schema).is_valid(body)


def _raises_invalid(clean, body):
    try:
        clean(body)
    except Invalid:
        return False
    return True


@pytest.mark.parametrize("body", CASE_BODIES)
def test_a_new_case_body_passes_the_schema_exactly_when_it_passes_the_rules(body):
    _, errors = case_fields_check(body)
    assert _schema_accepts(case_request_schema(), body) == (errors == [])


@pytest.mark.parametrize("body", [{k: v for k, v in b.items() if k != "source_trace_id"} for b in CASE_BODIES])
def test_an_edit_body_passes_the_schema_exactly_when_it_passes_the_rules(body):
    _, errors = case_fields_check(body, allowed=CASE_EDITABLE_FIELDS, required=())
    assert _schema_accepts(case_request_schema(allowed=CASE_EDITABLE_FIELDS, required=()), body) == (errors == [])


@pytest.mark.parametrize(
    "body",
    [
        {"trace_ids": ["run-1"]},
        {"trace_ids": []},
        {"trace_ids": [""]},
        {"trace_ids": ["run-1"], "use_output_as_expected": "yes"},
        {"trace_ids": ["run-1"], "name": None},
        {"trace_ids": ["run-1"], "name": "x" * 201},
        {"trace_ids": ["run-1"], "expectations": {"contains": "EUR"}},
        {"trace_ids": ["run-1"], "expectations": {"contain": "EUR"}},
        {"trace_ids": ["run-1"], "extra": 1},
        {},
    ],
)
def test_a_capture_body_passes_the_schema_exactly_when_it_passes_the_rules(body):
    assert _schema_accepts(CAPTURE_REQUEST_SCHEMA, body) == _raises_invalid(_capture_request_clean, body)


@pytest.mark.parametrize(
    "body",
    [
        {"name": "reservo"},
        {"name": "res ervo"},
        {"name": " reservo"},
        {"name": "\n\U000f0c48reservo"},
        {"name": "reservo\t"},
        {"name": ""},
        {"name": "r" * 101},
        {"name": "reservo", "description": "d" * 10_001},
        {"name": "reservo", "desc": "typo"},
        {},
    ],
)
def test_a_dataset_body_passes_the_schema_exactly_when_it_passes_the_rules(body):
    assert _schema_accepts(DATASET_REQUEST_SCHEMA, body) == _raises_invalid(dataset_fields_clean, body)
