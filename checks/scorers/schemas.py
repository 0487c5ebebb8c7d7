"""JSON Schema validation as scorers report it.

A schema is read with the draft its ``$schema`` names (Draft 2020-12 when it names
none). ``schema_errors`` lists EVERY violation (``iter_errors``), each with the JSON path
of the offending value (``$.total_cents``, ``$.rooms[0]``) and jsonschema's message, in
a stable order, so a failed check says everything that is wrong at once. ``format`` is
an annotation, not a check (the JSON Schema default). A value that the schema's quick
screen (``schema_screen``) proves valid skips jsonschema: it has no errors to list.
"""

import jsonschema
from jsonschema.exceptions import SchemaError
from jsonschema.validators import validator_for

from .schema_screen import screen_compile
from .values import canonical_json, json_path

_MESSAGE_CHARS = 300
# Checking a schema against its meta-schema costs far more than validating a small
# instance, and a pass applies the same few schemas to thousands of runs: valid
# schemas' validators (with their screens) are kept, keyed by their canonical JSON.
_VALIDATORS = {}
_VALIDATORS_KEPT = 256


# The same schema object comes back for every run of a pass (one resolved config):
# found by identity first, its canonical JSON is not computed again. The schema is
# kept with its validator so its id cannot be reused by another object meanwhile.
_BY_IDENTITY = {}


def _validator(schema):
    kept = _BY_IDENTITY.get(id(schema))
    if kept is not None and kept[0] is schema:
        return kept[1]
    validator = _validator_by_content(schema)
    if isinstance(schema, dict):
        if len(_BY_IDENTITY) >= _VALIDATORS_KEPT:
            _BY_IDENTITY.clear()
        _BY_IDENTITY[id(schema)] = (schema, validator)
    return validator


def _validator_by_content(schema):
    try:
        key = canonical_json(schema)
    except (TypeError, ValueError):
        key = None
    validator = _VALIDATORS.get(key) if key is not None else None
    if validator is None:
        if isinstance(schema, dict) and not isinstance(schema.get("$schema", ""), str):
            # validator_for reads $schema before anything is checked, and crashes on a non-string.
            raise SchemaError(f"{schema['$schema']!r} is not of type 'string'", path=["$schema"])
        cls = validator_for(schema, default=jsonschema.Draft202012Validator)
        cls.check_schema(schema)
        validator = (cls(schema), screen_compile(schema, cls))
        if key is not None:
            if len(_VALIDATORS) >= _VALIDATORS_KEPT:
                _VALIDATORS.clear()
            _VALIDATORS[key] = validator
    return validator


def schema_problems(schema):
    """Why ``schema`` is not a usable JSON Schema: ``[]`` when it is."""
    if not isinstance(schema, dict | bool):
        return [f"a JSON Schema is an object, not {type(schema).__name__}"]
    try:
        _validator(schema)
    except SchemaError as exc:
        return [f"{json_path(exc.absolute_path)}: {exc.message[:_MESSAGE_CHARS]}"]
    return []


def schema_errors(schema, instance):
    """Every violation of ``schema`` by ``instance`` as ``[{"path", "message", "validator"}]``.

    Raises ``jsonschema.SchemaError`` when the schema itself is invalid.
    """
    validator, screen = _validator(schema)
    if screen is not None and screen(instance):
        return []
    errors = [
        {
            "path": json_path(error.absolute_path),
            "message": error.message[:_MESSAGE_CHARS],
            "validator": error.validator,
        }
        for error in validator.iter_errors(instance)
    ]
    errors.sort(key=lambda e: (e["path"], e["validator"] or "", e["message"]))  # a `false` schema names no validator
    return errors
