"""The rules a dataset's and a golden case's fields obey, shared by every door.

The API, the browser pages and JSONL import all hand raw values to the services,
which check them here, so a case is held to the same rules however it arrives.
Checks return ``(clean, errors)``: ``errors`` is a list of ``{field, message}`` with
the field's path (``expectations.tool_match``, ``expectations.expected_tools[0]``);
``*_clean`` variants raise ``Invalid`` instead. Unknown keys are errors, never
silently dropped: a typo such as ``expected_tool`` names itself.

Expectations are validated against the published schema
(``checks.expectations.EXPECTATIONS_SCHEMA``, JSON Schema draft 7). A JSON Schema
given as an expectation (``tool_output_schema``, ``output_schema``) must itself be a
valid schema, read with the draft it names, as the scorers will read it.
"""

import difflib
import re

from jsonschema import Draft7Validator

from checks.expectations import EXPECTATIONS_SCHEMA
from checks.json_rules import JSON_MAX_DEPTH
from checks.scorers.matchers import matcher_problems
from checks.scorers.patterns import pattern_problem, regex_spec
from checks.scorers.schemas import schema_problems
from datasets.models import CaseStatus
from evalsite.errors import NUL_MESSAGE, Invalid

CASE_NAME_MAX = 200
NOTES_MAX = 20_000
DESCRIPTION_MAX = 10_000
TRACE_ID_MAX = 200
DATASET_NAME_MAX = 100
# A dataset name is one line of text, so a branch name such as "123/merge" or "équipe A"
# works on every path: no control characters, no blank or "/" at either end, no empty
# "//" or "."/".." segment, and, after a "/", no last segment that the paths under a
# dataset use themselves ("a/cases" would read as the cases of "a").
_RESERVED_SEGMENTS = "cases|export|import|gate-policy|from-traces|new|export\\.jsonl"
DATASET_NAME_PATTERN = re.compile(
    r"^(?![\s/])(?!.*[\s/]$)(?!.*//)(?!(?:.*/)?\.{1,2}(?:/|$))"
    rf"(?!.*/(?:{_RESERVED_SEGMENTS})$)[^\x00-\x1f\x7f]+$"
)
DATASET_NAME_RULES = (
    "must be one line of text without a blank or '/' at either end, an empty segment ('//', '.', '..'), or a "
    "last segment after '/' named cases, export, import, gate-policy, from-traces or new"
)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_MESSAGE_CHARS = 300

# What a case carries, in the order JSONL lines and exports list it.
CASE_FIELDS = ("name", "input", "expected_output", "expectations", "status", "notes", "metadata", "source_trace_id")
# What an edit may change: where a case came from is history, not an editable field. A
# quarantine is an operational state, set by an edit (with its reason), never imported.
CASE_CONTENT_FIELDS = ("name", "input", "expected_output", "expectations", "status", "notes", "metadata")
CASE_EDITABLE_FIELDS = (*CASE_CONTENT_FIELDS, "quarantined", "quarantine_reason")
QUARANTINE_REASON_MAX = 2000
CASE_DEFAULTS = {
    "input": None,
    "expected_output": None,
    "expectations": {},
    "status": CaseStatus.ACTIVE.value,
    "notes": "",
    "metadata": {},
    "source_trace_id": None,
}
DATASET_FIELDS = ("name", "description")

# The same rules as JSON Schema, for the API's documentation: one table, so the OpenAPI
# description cannot drift from what the checks below accept (tests hold them together).
_EXPECTATIONS_DOC = {k: v for k, v in EXPECTATIONS_SCHEMA.items() if k != "$schema"}
CASE_FIELD_SCHEMAS = {
    "name": {"type": "string", "minLength": 1, "maxLength": CASE_NAME_MAX, "description": "Unique in the dataset."},
    "input": {"description": "What the agent is asked (any JSON)."},
    "expected_output": {"description": "The expected final answer (any JSON); null = none yet (needs one)."},
    "expectations": {
        **_EXPECTATIONS_DOC,
        "type": ["object", "null"],
        "description": "Checks the case is gated on; see GET /v1/api/schemas/expectations.",
    },
    "status": {"enum": list(CaseStatus.values), "description": "active (gated), draft or archived."},
    "notes": {"type": ["string", "null"], "maxLength": NOTES_MAX},
    "metadata": {"type": ["object", "null"], "description": "Free-form data kept with the case."},
    "source_trace_id": {
        "type": ["string", "null"],
        "minLength": 1,
        "maxLength": TRACE_ID_MAX,
        "description": "The run this case came from (kept for good).",
    },
    "quarantined": {
        "type": "boolean",
        "description": "A quarantined case is still run, scored and shown, but does not gate. Needs a reason.",
    },
    "quarantine_reason": {"type": "string", "maxLength": QUARANTINE_REASON_MAX},
}
DATASET_REQUEST_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["name"],
    "properties": {
        "name": {
            "type": "string",
            "pattern": DATASET_NAME_PATTERN.pattern,
            "maxLength": DATASET_NAME_MAX,
            "description": "Unique in the project; one line of text (a branch name such as 123/merge works).",
        },
        "description": {"type": ["string", "null"], "maxLength": DESCRIPTION_MAX},
    },
}


def case_request_schema(*, allowed=CASE_FIELDS, required=("name",), extra=None):
    """The JSON Schema of a request body made of case fields (``extra``: more properties)."""
    return {
        "type": "object",
        "additionalProperties": False,
        "required": list(required),
        "properties": {**{key: CASE_FIELD_SCHEMAS[key] for key in allowed}, **(extra or {})},
    }


_expectations_validator = Draft7Validator(EXPECTATIONS_SCHEMA)
_SCHEMA_VALUED = ("tool_output_schema", "output_schema")


def json_value_problem(value):
    """Why a JSON value cannot be stored, or None: PostgreSQL refuses the NUL character in
    text and in jsonb, and a value nested deeper than ``JSON_MAX_DEPTH`` is refused
    before anything recursive (comparison, schema checks) reads it."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            if "\x00" in item:
                return NUL_MESSAGE
        elif isinstance(item, dict | list):
            if depth > JSON_MAX_DEPTH:
                return f"is nested too deeply (more than {JSON_MAX_DEPTH} levels)"
            if isinstance(item, dict):
                stack.extend((key, depth) for key in item)
                stack.extend((child, depth + 1) for child in item.values())
            else:
                stack.extend((child, depth + 1) for child in item)
    return None


def field_path(prefix, parts):
    """``prefix`` followed by a JSON path: ``expectations.required_span.kind``, ``x.tools[0]``."""
    path = prefix
    for part in parts:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path = f"{path}.{part}" if path else str(part)
    return path


def unknown_key_message(key, known, *, what="field"):
    message = f"is not a known {what}"
    close = difflib.get_close_matches(str(key), known, n=1, cutoff=0.6)
    if close:
        message += f"; did you mean {close[0]!r}?"
    return message


def expectations_check(value, *, field="expectations"):
    """``(expectations, errors)``; ``None`` stands for no expectations (``{}``)."""
    if value is None:
        return {}, []
    if not isinstance(value, dict):
        return value, [{"field": field, "message": "must be a JSON object (see GET /v1/api/schemas/expectations)"}]
    problem = json_value_problem(value)
    if problem:
        return value, [{"field": field, "message": problem}]
    errors = []
    for error in sorted(_expectations_validator.iter_errors(value), key=lambda e: list(map(str, e.absolute_path))):
        if error.validator == "additionalProperties":
            known = list(error.schema.get("properties", {}))
            extra = [k for k in error.instance if k not in known]
            what = "expectation" if not error.absolute_path else "field"
            for key in extra:
                errors.append(
                    {
                        "field": field_path(field, [*error.absolute_path, key]),
                        "message": unknown_key_message(key, known, what=what)
                        + (" (see GET /v1/api/schemas/expectations)" if what == "expectation" else ""),
                    }
                )
            continue
        errors.append({"field": field_path(field, error.absolute_path), "message": error.message[:_MESSAGE_CHARS]})
    if not errors:
        for key in _SCHEMA_VALUED:
            if key in value:
                errors.extend(
                    {"field": f"{field}.{key}", "message": f"is not a valid JSON Schema: {problem}"}
                    for problem in _schema_problems(value[key])
                )
        errors.extend(_pattern_problems(value, field))
    return value, errors


def _pattern_problems(expectations, field):
    """Patterns RE2 refuses (``output_regex``, ``$regex`` matchers), malformed matchers, and an
    ``answer_check`` that needs an expectation the case does not have."""
    errors = []
    if "output_regex" in expectations:
        spec = regex_spec(expectations["output_regex"])
        problem = pattern_problem(spec["pattern"], spec["flags"])
        if problem:
            path = "output_regex" if isinstance(expectations["output_regex"], str) else "output_regex.pattern"
            errors.append({"field": f"{field}.{path}", "message": problem})
    for index, call in enumerate(expectations.get("expected_tool_calls", ())):
        if "args" in call:
            errors.extend(
                {"field": f"{field}.expected_tool_calls[{index}].{path}", "message": message}
                for path, message in matcher_problems(call["args"])
            )
    if expectations.get("answer_check") == "regex" and "output_regex" not in expectations:
        errors.append({"field": f"{field}.answer_check", "message": "regex needs the expectation output_regex"})
    return errors


def _schema_problems(schema):
    # The draft is looked up by "$schema", which must therefore be a string.
    if isinstance(schema, dict) and "$schema" in schema and not isinstance(schema["$schema"], str):
        return ["$schema must be a string naming a JSON Schema draft"]
    try:
        return schema_problems(schema)
    except RecursionError:
        return ["the schema is nested too deeply to be checked"]


def _text(value, field, *, maximum, required, single_line):
    if not isinstance(value, str):
        return value, [{"field": field, "message": "must be a string"}]
    if "\x00" in value:
        return value, [{"field": field, "message": NUL_MESSAGE}]
    value = value.strip()
    if required and not value:
        return value, [{"field": field, "message": "must not be empty"}]
    if len(value) > maximum:
        return value, [{"field": field, "message": f"must be at most {maximum} characters (got {len(value)})"}]
    if single_line and _CONTROL.search(value):
        return value, [{"field": field, "message": "must not contain line breaks or control characters"}]
    return value, []


def case_name_check(value, field="name"):
    return _text(value, field, maximum=CASE_NAME_MAX, required=True, single_line=True)


def _any_json(value, field):
    problem = json_value_problem(value)
    return value, [{"field": field, "message": problem}] if problem else []


def _notes(value, field):
    if value is None:
        return "", []
    if not isinstance(value, str):
        return value, [{"field": field, "message": "must be a string"}]
    if "\x00" in value:
        return value, [{"field": field, "message": NUL_MESSAGE}]
    if len(value) > NOTES_MAX:
        return value, [{"field": field, "message": f"must be at most {NOTES_MAX} characters (got {len(value)})"}]
    return value, []


def _metadata(value, field):
    if value is None:
        return {}, []
    if not isinstance(value, dict):
        return value, [{"field": field, "message": "must be a JSON object"}]
    return _any_json(value, field)


def _status(value, field):
    if value not in CaseStatus.values:
        return value, [{"field": field, "message": "must be one of " + ", ".join(CaseStatus.values)}]
    return value, []


def _source_trace_id(value, field):
    if value is None:
        return None, []
    return _text(value, field, maximum=TRACE_ID_MAX, required=True, single_line=False)


def _expectations(value, field):
    return expectations_check(value, field=field)


def _quarantined(value, field):
    return (value, []) if isinstance(value, bool) else (value, [{"field": field, "message": "must be true or false"}])


def _quarantine_reason(value, field):
    return _text(value, field, maximum=QUARANTINE_REASON_MAX, required=False, single_line=False)


_CASE_CHECKS = {
    "name": case_name_check,
    "input": _any_json,
    "expected_output": _any_json,
    "expectations": _expectations,
    "status": _status,
    "notes": _notes,
    "metadata": _metadata,
    "source_trace_id": _source_trace_id,
    "quarantined": _quarantined,
    "quarantine_reason": _quarantine_reason,
}


def case_fields_check(data, *, allowed=CASE_FIELDS, required=("name",)):
    """``(clean, errors)`` for the case fields in ``data``; only keys present are returned."""
    if not isinstance(data, dict):
        return {}, [{"field": None, "message": "must be a JSON object"}]
    errors = [{"field": str(key), "message": unknown_key_message(key, allowed)} for key in data if key not in allowed]
    clean = {}
    for key in allowed:
        if key in data:
            value, problems = _CASE_CHECKS[key](data[key], key)
            clean[key] = value
            errors.extend(problems)
        elif key in required:
            errors.append({"field": key, "message": "is required"})
    return clean, errors


def case_fields_clean(data, *, allowed=CASE_FIELDS, required=("name",), detail="The case has invalid fields."):
    clean, errors = case_fields_check(data, allowed=allowed, required=required)
    if errors:
        raise Invalid(detail + " Nothing was written.", errors=errors)
    return clean


def dataset_fields_clean(data):
    """The fields of a new dataset: a ``name`` (``DATASET_NAME_PATTERN``) and a description."""
    if not isinstance(data, dict):
        raise Invalid("The body must be a JSON object.", errors=[{"field": None, "message": "must be a JSON object"}])
    errors = [
        {"field": str(k), "message": unknown_key_message(k, DATASET_FIELDS)} for k in data if k not in DATASET_FIELDS
    ]
    name = data.get("name")
    if "name" not in data:
        errors.append({"field": "name", "message": "is required"})
    elif not isinstance(name, str):
        errors.append({"field": "name", "message": "must be a string"})
    elif not name:
        errors.append({"field": "name", "message": "must not be empty"})
    elif not DATASET_NAME_PATTERN.match(name):
        # Taken as given, as its schema says: a blank at either end is refused, not trimmed.
        errors.append({"field": "name", "message": DATASET_NAME_RULES})
    elif len(name) > DATASET_NAME_MAX:
        errors.append({"field": "name", "message": f"must be at most {DATASET_NAME_MAX} characters"})
    given = data.get("description")
    description, problems = _text(
        "" if given is None else given, "description", maximum=DESCRIPTION_MAX, required=False, single_line=False
    )
    errors.extend(problems)
    if errors:
        raise Invalid("The dataset has invalid fields. Nothing was written.", errors=errors)
    return {"name": name, "description": description}
