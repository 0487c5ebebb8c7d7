"""The schema screen never calls a value valid that jsonschema would refuse.

Random schemas built from the screened keywords (and a few it must refuse to screen)
meet random JSON values; each value is checked by the screen and by jsonschema. The
screen may say False for a valid value (jsonschema is then asked), never True for an
invalid one, and on these schemas it must agree with jsonschema wherever its stricter
rules (an integer is an ``int``) do not apply. The seed is in the test id: replay one
with ``EVALSITE_SCREEN_SEED=<seed>``.
"""

import math
import os
import random
import secrets

import jsonschema
import pytest

from checks.scorers.schema_screen import screen_compile
from checks.scorers.schemas import schema_errors

SEED = int(os.environ.get("EVALSITE_SCREEN_SEED") or secrets.randbits(32))
NAMES = ["a", "b", "c", "answer", "confidence"]
TYPES = ["object", "array", "string", "number", "integer", "boolean", "null"]


def _schema(rng, depth=0):
    if rng.random() < 0.08:
        return rng.choice([True, False])
    schema = {}
    if rng.random() < 0.7:
        schema["type"] = rng.choice(TYPES) if rng.random() < 0.8 else rng.sample(TYPES, 2)
    if depth < 3 and rng.random() < 0.5:
        schema["properties"] = {name: _schema(rng, depth + 1) for name in rng.sample(NAMES, rng.randint(0, 3))}
    if rng.random() < 0.3:
        schema["required"] = rng.sample(NAMES, rng.randint(0, 2))
    if depth < 3 and rng.random() < 0.2:
        schema["additionalProperties"] = rng.choice([False, True, _schema(rng, depth + 1)])
    if depth < 3 and rng.random() < 0.3:
        schema["items"] = _schema(rng, depth + 1)
    for keyword in ("minimum", "maximum"):
        if rng.random() < 0.2:
            schema[keyword] = rng.choice([0, 1, -2.5, 0.5, 10])
    for keyword in ("minLength", "maxLength", "minItems", "maxItems"):
        if rng.random() < 0.15:
            schema[keyword] = rng.randint(0, 3)
    if rng.random() < 0.1:
        schema["title"] = "annotated"
    return schema


def _value(rng, depth=0):
    kind = rng.randrange(9 if depth < 3 else 7)
    if kind == 0:
        return None
    if kind == 1:
        return rng.choice([True, False])
    if kind == 2:
        return rng.choice([0, 1, 2, -3, 11, 10**20])
    if kind == 3:
        return rng.choice([0.0, 0.5, 1.0, -2.5, 10.5, math.nan, math.inf])
    if kind in (4, 5, 6):
        return rng.choice(["", "x", "yes", "four", "\u00e9t\u00e9"])
    if kind == 7:
        return [_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {name: _value(rng, depth + 1) for name in rng.sample(NAMES, rng.randint(0, 4))}


def _has_integral_float(value):
    if type(value) is float:
        return value.is_integer()
    if type(value) is list:
        return any(_has_integral_float(item) for item in value)
    if type(value) is dict:
        return any(_has_integral_float(item) for item in value.values())
    return False


@pytest.mark.parametrize("seed", [20261201, SEED])
def test_the_screen_never_passes_what_jsonschema_refuses(seed):
    rng = random.Random(seed)
    screened = agreed = 0
    for _ in range(400):
        schema = _schema(rng)
        validator = jsonschema.Draft202012Validator(schema)
        screen = screen_compile(schema, jsonschema.Draft202012Validator)
        assert screen is not None, schema  # every keyword drawn here is screened
        screened += 1
        for _ in range(25):
            value = _value(rng)
            valid = validator.is_valid(value)
            said = screen(value)
            assert not (said and not valid), (seed, schema, value)
            if not _has_integral_float(value):
                assert said == valid, (seed, schema, value)
                agreed += 1
    assert screened == 400 and agreed > 5000


@pytest.mark.parametrize(
    "schema",
    [
        {"enum": [1, 2]},
        {"type": "object", "properties": {"a": {"const": 1}}},
        {"$ref": "#/$defs/x", "$defs": {"x": {}}},
        {"type": "string", "pattern": "^a"},
        {"items": [{"type": "string"}]},
        {"type": "object", "patternProperties": {"^a": {}}, "additionalProperties": False},
        {"allOf": [{"type": "string"}]},
        {"type": "widget"},
    ],
)
def test_a_schema_with_other_keywords_gets_no_screen(schema):
    assert screen_compile(schema, jsonschema.Draft202012Validator) is None


def test_an_older_draft_gets_no_screen():
    assert screen_compile({"type": "integer"}, jsonschema.Draft4Validator) is None
    assert screen_compile({"type": "integer"}, jsonschema.Draft7Validator) is not None


def test_a_value_json_cannot_hold_is_left_to_jsonschema():
    screen = screen_compile({"type": "object", "properties": {"a": {"minimum": 0}}}, jsonschema.Draft202012Validator)
    assert screen({"a": 1}) is True
    assert screen({"a": (1, 2)}) is False
    assert screen({"a": 1.0}) is True


def test_schema_errors_still_lists_every_error_of_an_invalid_value():
    schema = {
        "type": "object",
        "required": ["answer", "confidence"],
        "properties": {"answer": {"type": "string", "minLength": 1}, "confidence": {"type": "number", "maximum": 1}},
    }
    assert schema_errors(schema, {"answer": "yes", "confidence": 0.5}) == []
    assert [e["path"] for e in schema_errors(schema, {"answer": "", "confidence": 2})] == ["$.answer", "$.confidence"]
    assert schema_errors({"type": "integer"}, 1.0) == []  # not screened as valid: jsonschema says so
