"""JSON values as scorers compare, hash and show them.

- ``canonical_json`` is the one serialisation used for hashing and comparing: sorted
  keys, no spaces, UTF-8 text (no ``\\u`` escapes), and a number that is a whole float
  written as an integer (``1000.0`` and ``1000`` are the same JSON number). NaN and
  infinities are refused: they are not JSON.
- ``json_equal`` compares two JSON values by that form, so ``7500 == 7500.0`` but
  ``True != 1`` and ``"7500" != 7500``.
- ``json_from_string`` reads a string that holds JSON (tools often return their result
  as a JSON string).
- ``is_empty`` is the definition of "no answer" shared by every scorer.
- ``answer_texts`` lists the prose of an answer with the JSON path of each piece.
- ``preview`` keeps evidence in a score's detail short.
"""

import json
import math
from decimal import Decimal

_PREVIEW_CHARS = 200


def json_normalize(value):
    """``value`` with whole floats as ints, Decimals as numbers and tuples as lists."""
    if isinstance(value, bool) or value is None or isinstance(value, str | int):
        return value
    if isinstance(value, Decimal):
        value = int(value) if value == value.to_integral_value() else float(value)
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{value} is not a JSON number")
        return int(value) if value.is_integer() else value
    if isinstance(value, dict):
        return {str(k): json_normalize(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_normalize(v) for v in value]
    raise TypeError(f"{type(value).__name__} is not a JSON value")


_AS_IS = (str, int, type(None))  # bool is an int


def _normal_already(value):
    """Whether ``json_normalize`` leaves ``value`` as it is (the usual config: strings, lists of them)."""
    if type(value) is not dict:
        return False
    for key, item in value.items():
        if type(key) is not str:
            return False
        if type(item) is list:
            if not all(isinstance(part, _AS_IS) for part in item):
                return False
        elif not isinstance(item, _AS_IS):
            return False
    return True


def canonical_json(value):
    """The canonical JSON text of ``value`` (sorted keys, no spaces, whole floats as ints)."""
    if not _normal_already(value):
        value = json_normalize(value)
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def json_equal(a, b):
    """True when ``a`` and ``b`` are the same JSON value (a bool is never a number)."""
    return canonical_json(a) == canonical_json(b)


def _reject_constant(name):
    raise ValueError(f"{name} is not valid JSON")


# One decoder for every call: json.loads with options builds a new one each time.
_STRICT = json.JSONDecoder(parse_constant=_reject_constant)


def json_from_string(text):
    """``(True, value)`` when ``text`` is a string holding a JSON document, else ``(False, error)``.

    Strict JSON: ``NaN`` and ``Infinity`` are refused; surrounding whitespace is allowed.
    """
    if not isinstance(text, str):
        return False, "not a string"
    try:
        if text.startswith("\ufeff"):  # as json.loads refuses it
            raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
        return True, _STRICT.decode(text)
    except ValueError as exc:  # json.JSONDecodeError is a ValueError
        return False, str(exc)


def json_lenient(value):
    """``value`` itself, or the parsed value when it is a string holding JSON."""
    ok, parsed = json_from_string(value)
    return parsed if ok else value


def is_empty(value):
    """No answer: ``None``, a blank string, an empty list or an empty dict.

    ``0``, ``False`` and ``"0"`` are answers.
    """
    if value is None:
        return True
    if isinstance(value, str):
        return not value.strip()
    if isinstance(value, list | tuple | dict):
        return len(value) == 0
    return False


def json_type(value):
    """The JSON name of ``value``'s type: string, number, boolean, null, array or object."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float | Decimal):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def json_path(parts):
    """``$.rooms[0].name`` from ``["rooms", 0, "name"]``."""
    path = "$"
    for part in parts:
        if isinstance(part, int):
            path += f"[{part}]"
        elif isinstance(part, str) and part.isidentifier():
            path += f".{part}"
        else:
            path += f"[{json.dumps(str(part), ensure_ascii=False)}]"
    return path


def answer_texts(value, _parts=()):
    """Every piece of prose in an answer, as ``[(json_path, text), ...]``.

    A string answer is one piece at ``$``; a list or dict gives its string values at
    any depth (numbers, booleans and keys are not prose).
    """
    if isinstance(value, str):
        return [(json_path(_parts), value)]
    if isinstance(value, dict):
        return [t for k, v in value.items() for t in answer_texts(v, (*_parts, k))]
    if isinstance(value, list | tuple):
        return [t for i, v in enumerate(value) for t in answer_texts(v, (*_parts, i))]
    return []


def preview(value, limit=_PREVIEW_CHARS):
    """``value`` when its JSON is short, else the start of its JSON text ending in ``…``."""
    try:
        text = value if isinstance(value, str) else canonical_json(value)
    except (TypeError, ValueError):
        text = repr(value)
        value = text
    if len(text) <= limit:
        return value
    return text[:limit] + "…"


def number(value):
    """A JSON-safe float for a figure that may arrive as a Decimal (cost in cents)."""
    return None if value is None else float(value)
