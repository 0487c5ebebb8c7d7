"""Scorers of the run's final answer: answered, exact_match, contains, json_valid.

Rules (docs/scorers.md states them with examples):

- No answer: ``None``, a blank string, ``[]`` or ``{}`` (``values.is_empty``). A run
  with no answer fails ``contains``, ``json_valid`` and ``exact_match`` (unless the
  expected answer is itself ``null``): the check was made and the answer was not there.
- exact_match: two strings are equal after trimming surrounding whitespace (case and
  inner whitespace count). When exactly one side is a string that holds JSON, it is
  parsed and the two JSON values compared. Otherwise JSON equality (``7500 == 7500.0``,
  ``True != 1``, key order ignored, list order kept).
- contains: case-sensitive substring of a string answer; for a structured answer, of
  any string inside it or of its canonical JSON text (so ``"7500"`` is found in
  ``{"total_cents": 7500}``). Several values: all of them (``mode: all``, the default)
  or any one (``mode: any``). With ``answer_check: contains`` and no ``contains``
  expectation, the expected answer is the value.
- json_valid: a string answer must parse as strict JSON (no ``NaN``); a structured
  answer (object, array, number, boolean) is JSON already. With a schema, the parsed
  answer must also validate; every error is listed with its path. With an expected
  answer (``expected``; from the case under ``answer_check: json``), the parsed answer
  must equal the parsed expected answer: objects with the same keys, lists of the same
  length in the same order, JSON equality below; a matcher (``{"$regex": ...}``,
  ``$approx``, ``$in``, ``$any``, see ``matchers``) inside the expected answer matches
  instead of comparing. Every difference is listed with its path.
"""

from jsonschema.exceptions import SchemaError

from .base import Abstain, Result, Scorer
from .matchers import matcher_problems, value_mismatches
from .schemas import schema_errors
from .values import answer_texts, canonical_json, is_empty, json_equal, json_from_string, json_type, preview

_NO_CONFIG = {"type": "object", "properties": {}, "additionalProperties": False}


def _describe_answer(value):
    if isinstance(value, str):
        return {"answer_type": "string", "length": len(value)}
    return {"answer_type": json_type(value)}


def answered(run, config):
    if is_empty(run.output):
        return Result.verdict(False, "the run produced no answer", {"answer": preview(run.output)})
    detail = _describe_answer(run.output)
    return Result.verdict(True, "the run produced an answer", detail)


def _same_answer(actual, expected):
    if isinstance(actual, str) and isinstance(expected, str):
        return actual.strip() == expected.strip()
    if isinstance(actual, str) != isinstance(expected, str):
        # Answers are usually text while a reviewer may write the expected value as JSON:
        # the text "7500" equals 7500, the text "Focus" never equals a number.
        text, other = (actual, expected) if isinstance(actual, str) else (expected, actual)
        ok, parsed = json_from_string(text)
        return ok and json_equal(parsed, other)
    return json_equal(actual, expected)


def exact_match(run, config):
    if "expected" not in config:
        return Abstain("no_expected_output", {"message": "no expected answer to compare with"})
    expected = config["expected"]
    detail = {"expected": preview(expected), "actual": preview(run.output)}
    if _same_answer(run.output, expected):
        return Result.verdict(True, "the answer equals the expected answer", detail)
    if run.output is None:
        return Result.verdict(False, "the run produced no answer", detail)
    return Result.verdict(False, f"expected {preview(expected, 60)!r}, got {preview(run.output, 60)!r}", detail)


def _exact_match_from_case(run):
    return None if run.expected_output is None else {"expected": run.expected_output}


def _found(value, answer):
    if isinstance(answer, str):
        return value in answer
    return any(value in text for _, text in answer_texts(answer)) or value in canonical_json(answer)


def contains(run, config):
    value, mode = config["value"], config.get("mode", "all")
    detail = {"value": value, "mode": mode} if isinstance(value, list) else {"value": value}
    if is_empty(run.output):
        return Result.verdict(False, "the run produced no answer", detail)
    detail["answer"] = preview(run.output)
    if not isinstance(value, list):
        if _found(value, run.output):
            return Result.verdict(True, f"the answer contains {value!r}", detail)
        return Result.verdict(False, f"the answer does not contain {value!r}", detail)
    missing = [v for v in value if not _found(v, run.output)]
    detail["missing"] = missing
    if mode == "any":
        if len(missing) < len(value):
            return Result.verdict(True, f"the answer contains one of {value!r}", detail)
        return Result.verdict(False, f"the answer contains none of {value!r}", detail)
    if missing:
        return Result.verdict(False, f"the answer does not contain {missing[0]!r}", detail)
    return Result.verdict(True, f"the answer contains all of {value!r}", detail)


def _contains_from_case(run):
    value = run.expectations.get("contains")
    if value is None and run.expectations.get("answer_check") == "contains" and isinstance(run.expected_output, str):
        value = run.expected_output  # "check the expected answer by containment"
    if value is None:
        return None
    return dict(value) if isinstance(value, dict) else {"value": value}


# The last answer parsed, kept with the text itself (so compared by identity, never a
# reused id): a pass that names json_valid twice, without and with a schema, parses each
# answer once. Parsed answers are only read, never changed.
_LAST_PARSED = (None, None)


def _answer_parsed(text):
    global _LAST_PARSED
    last = _LAST_PARSED
    if last[0] is text:
        return last[1]
    parsed = json_from_string(text)
    _LAST_PARSED = (text, parsed)
    return parsed


def json_valid(run, config):
    schema = config.get("schema")
    detail = {"schema_checked": schema is not None}
    if is_empty(run.output):
        return Result.verdict(False, "the run produced no answer", detail)
    if isinstance(run.output, str):
        ok, parsed = _answer_parsed(run.output)
        if not ok:
            detail["errors"] = [{"path": "$", "message": f"the answer is not JSON: {parsed}", "validator": "json"}]
            return Result.verdict(False, f"the answer is not JSON: {parsed}", detail)
    else:
        parsed = run.output
    if schema is not None:
        try:
            errors = schema_errors(schema, parsed)
        except SchemaError as exc:
            return Abstain("invalid_schema", {"message": f"the configured schema is invalid: {exc.message}"})
        detail["errors"] = errors
        if errors:
            first = errors[0]
            more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
            return Result.verdict(False, f"{first['path']}: {first['message']}{more}", detail)
    if "expected" in config:
        return _json_compared(parsed, config["expected"], detail)
    if schema is None:
        return Result.verdict(True, "the answer is valid JSON", detail)
    return Result.verdict(True, "the answer is valid JSON and matches the schema", detail)


def _json_expected(expected):
    """The expected answer as JSON: a string that holds JSON is parsed (a reviewer may write it as text)."""
    if isinstance(expected, str):
        ok, parsed = json_from_string(expected)
        if ok:
            return parsed
    return expected


def _json_compared(parsed, expected, detail):
    want = _json_expected(expected)
    problems = matcher_problems(want, "expected_output")
    if problems:
        path, message = problems[0]
        return Abstain("invalid_expected", {"message": f"{path}: {message}"})
    detail["answer_compared"] = True
    mismatches = value_mismatches(want, parsed, "$", exact_keys=True, unexpected="unexpected key")
    detail["mismatches"] = [{"path": path, "message": text} for path, text in mismatches]
    if mismatches:
        # A wrong answer, not a malformed one: reported with the answer checks, not the schema's.
        detail["category"] = "output"
        path, text = mismatches[0]
        more = f" (and {len(mismatches) - 1} more)" if len(mismatches) > 1 else ""
        return Result.verdict(False, f"{path}: {text}{more}", detail)
    return Result.verdict(True, "the answer equals the expected answer as JSON", detail)


def _json_valid_from_case(run):
    config = {}
    if "output_schema" in run.expectations:
        config["schema"] = run.expectations["output_schema"]
    if run.expectations.get("answer_check") == "json" and run.expected_output is not None:
        config["expected"] = run.expected_output
    return config or None


SCORERS = (
    Scorer(
        id="answered",
        description="The run produced a non-empty answer.",
        version="1",
        kind="builtin",
        needs_config=False,
        config_schema=_NO_CONFIG,
        category="output",
        expectation_keys=(),
        func=answered,
        reads="nothing",
    ),
    Scorer(
        id="exact_match",
        description="The answer equals the expected answer (config expected, or the case's expected_output).",
        version="1",
        kind="builtin",
        needs_config=True,
        config_schema={
            "type": "object",
            "properties": {"expected": {"description": "The expected answer (any JSON value)."}},
            "required": ["expected"],
            "additionalProperties": False,
        },
        category="output",
        expectation_keys=(),
        func=exact_match,
        case_config=_exact_match_from_case,
        missing_reason="no_expected_output",
        missing_message="no expected answer: the case has no expected_output and the request gave no config.exact_match.expected",
        reads="nothing",
    ),
    Scorer(
        id="contains",
        description="The answer contains a required string, or several (all, or any one; case-sensitive).",
        version="1",
        kind="builtin",
        needs_config=True,
        config_schema={
            "type": "object",
            "properties": {
                "value": {
                    "anyOf": [
                        {"type": "string", "minLength": 1},
                        {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1},
                    ],
                    "description": "The required string, or several.",
                },
                "mode": {"enum": ["all", "any"], "default": "all", "description": "With several: all, or any one."},
            },
            "required": ["value"],
            "additionalProperties": False,
        },
        category="output",
        gated_by="contains",
        expectation_keys=("contains",),
        func=contains,
        case_config=_contains_from_case,
        reads="nothing",
    ),
    Scorer(
        id="json_valid",
        description="The answer parses as JSON and, given a schema, validates against it; given an expected "
        "answer, equals it as JSON.",
        version="1",
        kind="builtin",
        needs_config=False,
        config_schema={
            "type": "object",
            "properties": {
                "schema": {"type": "object", "description": "JSON Schema the answer must satisfy."},
                "expected": {
                    "description": "The answer expected, compared as JSON (matchers allowed); from the case's "
                    "expected_output under answer_check: json."
                },
            },
            "additionalProperties": False,
        },
        category="schema",
        gated_by="output_schema",
        expectation_keys=("output_schema",),
        func=json_valid,
        case_config=_json_valid_from_case,
        schema_keys=("schema",),
        reads="nothing",
    ),
)
