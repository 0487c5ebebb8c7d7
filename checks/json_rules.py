"""The rules of JSON sent to evalsite (API bodies, OTLP/JSON exports, JSONL imports).

Pure Python, so the OTLP mapping can use it too; ``evalsite.json_input.json_read`` is
the same reader raising ``Invalid`` (400). ``json_parse`` parses a document and refuses, naming the path
(``traces[0].metadata.n``), what could be parsed but not stored and read back exactly:

- a number outside the signed 64-bit integer range (``1e20``, ``-1e300``): PostgreSQL
  keeps it as an exact integer that no JSON encoder of the answers can write back, so
  one such value would break every list holding it. Send such a value as a string;
- ``NaN``, ``Infinity`` and ``-Infinity`` (not JSON);
- an object holding the same key twice (which one would win is the parser's whim);
- nesting deeper than ``JSON_MAX_DEPTH`` levels;
- a NUL character (PostgreSQL text cannot hold it) or a lone surrogate (not Unicode)
  in a string or a key;
- bytes that are not UTF-8 (RFC 8259), surrogates encoded as bytes included (CESU-8
  writes U+D800 as ``ED A0 80``): Python's parser would read those into lone surrogates
  that no rule after it expects. Refused for the whole ``body``, with the offset.

Every refusal is a ``JsonRefused`` carrying the ``field`` and the ``message``.
A document with nothing to refuse (nearly every one) is read by orjson when the checks
below can vouch for it (``_parse_clean``); any doubt sends it to the standard parser
with a hook on every object, which finds and names what is wrong. The answer is the same
either way; only the time differs.
``json_safe`` is the reading side: a value already stored, made writable by any JSON
encoder (out-of-range integers become their decimal text).
"""

import json
import re

import orjson

NUL_MESSAGE = "must not contain the NUL character (\\u0000)"
JSON_MAX_DEPTH = 64
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
RANGE_MESSAGE = "is a number beyond the 64-bit integer range; send it as a string"
DEPTH_MESSAGE = f"is nested deeper than {JSON_MAX_DEPTH} levels"
SURROGATE_MESSAGE = "holds a lone surrogate (\\ud800-\\udfff), which is not Unicode"
UTF8_MESSAGE = "is not valid UTF-8"
_SURROGATE_ESCAPE = re.compile(rb"\\[uU][dD][89a-fA-F]")
_NUL_ESCAPE = b"\\u0000"


class JsonRefused(ValueError):
    """A JSON document refused: ``field`` is where, ``message`` what is wrong there."""

    def __init__(self, field, message, detail=None):
        super().__init__(detail or f"{field} {message}.")
        self.field = field
        self.message = message
        self.detail = detail or f"{field} {message}."


class _DuplicateKey(ValueError):
    def __init__(self, key):
        super().__init__(key)
        self.key = key


def _pairs(pairs):
    value = dict(pairs)
    if len(value) != len(pairs):
        seen = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return value


class _Duplicated(dict):
    """An object that held a key twice (only built to say where)."""


def _pairs_marking(pairs):
    value = dict(pairs)
    if len(value) == len(pairs):
        return value
    seen = set()
    for key, _ in pairs:
        if key in seen:
            return _Duplicated({key: None})
        seen.add(key)
    return value


def _duplicate_path(body, where):
    """``(path, key)`` of a repeated key (``metadata.commit``): a second parse, on refusal only."""
    stack = [(json.loads(body, object_pairs_hook=_pairs_marking), None)]
    while stack:
        value, trail = stack.pop()
        if isinstance(value, _Duplicated):
            key = next(iter(value))
            return _path((trail, key), where), key
        if isinstance(value, dict):
            stack.extend((item, (trail, key)) for key, item in value.items())
        elif isinstance(value, list):
            stack.extend((item, (trail, index)) for index, item in enumerate(value))
    return where, ""


def _constant(name):
    raise ValueError(f"{name} is not a JSON number")


def json_parse(body, *, where="body", nul=True):
    """The JSON value in ``body`` (bytes or text), checked as the module docstring says.

    Raises ``JsonRefused``; ``where`` names the root. ``nul=False`` lets NUL characters
    through, for a caller that replaces them itself.
    """
    if isinstance(body, str):
        try:
            body = body.encode("utf-8")
        except UnicodeEncodeError:  # text holding a lone surrogate: the walk names where
            return _parse_checked(body.encode("utf-8", "surrogatepass"), where, nul, text_surrogates=True)
    value = _parse_clean(body)
    return _parse_checked(body, where, nul) if value is _UNSURE else value


def _parse_checked(body, where, nul, text_surrogates=False):
    """``json_parse`` the long way: the standard parser, refusing with the path of what is wrong.

    ``text_surrogates``: ``body`` was text with lone surrogates, encoded as they are
    (the walk then names the string that holds one); bytes must be UTF-8.
    """
    if not text_surrogates:
        _utf8_check(body, where)
    try:
        value = json.loads(body, object_pairs_hook=_pairs, parse_constant=_constant)
    except _DuplicateKey:
        path, key = _duplicate_path(body, where)
        _refuse(path, f"holds the key {key!r} twice; send each key once")
    except RecursionError:
        _refuse(where, DEPTH_MESSAGE)
    except json.JSONDecodeError as exc:
        detail = f"The {where} is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})."
        raise JsonRefused(where, f"is not valid JSON: {exc.msg}", detail) from None
    except ValueError as exc:  # a constant, or bytes that are not UTF-8
        raise JsonRefused(where, f"is not valid JSON: {exc}", f"The {where} is not valid JSON: {exc}.") from None
    nul = nul and _NUL_ESCAPE in body
    _walk(value, where, nul=nul, strings=nul or text_surrogates or _SURROGATE_ESCAPE.search(body) is not None)
    return value


def _utf8_check(body, where):
    try:
        body.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = body[exc.start : exc.start + 3].hex(" ").upper()
        message = (
            f"{UTF8_MESSAGE}: byte {exc.start} ({bad}...) {exc.reason}; send UTF-8 "
            "(a surrogate encoded as bytes, ED A0 80 in CESU-8, is not UTF-8)"
        )
        raise JsonRefused(where, message, f"The {where} {message}.") from None


_UNSURE = object()
_KEY_END = b'":'
_ESCAPED_QUOTE_COLON = b'\\":'
_BACKSLASH_KEY_END = b'\\\\":'
_SPACED_KEY_END = re.compile(rb'"[ \t\r\n]+:')


def _parse_clean(body):
    """The value of ``body`` when it has nothing to refuse and that is proven cheaply, else ``_UNSURE``.

    orjson parses strict JSON (no ``NaN``, no invalid UTF-8, no lone surrogate) several
    times faster than ``json.loads`` with a hook on every object. What it lets through is
    ruled out here, or the document is left to the full check:

    - NUL and surrogate escapes: any in the body leaves it to the full check;
    - depth and numbers: one walk with no path kept (``_keys_counted``); a float at
      the edge of the range is a doubt (orjson reads an integer beyond 64 bits as one);
    - a repeated key (orjson keeps the last): the walk counts the keys it kept, and the
      body's ``":`` are counted. Outside strings a ``"`` only opens or closes one, so
      each key closed right before its colon is one ``":``; inside a string a ``"`` is
      escaped, so a ``":`` there is a ``\\":``, counted apart. Once keys spaced from their
      colon and keys ending in a backslash (``\\\\":``) are set aside (a doubt), the
      difference is at least the number of keys written, and equal to the number kept
      only when none was repeated (a string that starts with a colon makes it larger).
    """
    if (
        _NUL_ESCAPE in body
        or _BACKSLASH_KEY_END in body
        or _SURROGATE_ESCAPE.search(body)
        or _SPACED_KEY_END.search(body)
    ):
        return _UNSURE
    try:
        value = orjson.loads(body)
    except orjson.JSONDecodeError:
        return _UNSURE
    keys = _keys_counted([value], -1)  # the root, whatever its type, as the item of a list above it
    if keys < 0 or keys != body.count(_KEY_END) - body.count(_ESCAPED_QUOTE_COLON):
        return _UNSURE
    return value


def _keys_counted(container, depth):
    """The keys of every object in ``container`` (a dict or list at ``depth``), or -1 on a doubt."""
    if depth >= JSON_MAX_DEPTH:
        return -1
    if type(container) is dict:
        keys, items = len(container), container.values()
    else:
        keys, items = 0, container
    for item in items:
        kind = type(item)
        if kind is dict or kind is list:
            inner = _keys_counted(item, depth + 1)
            if inner < 0:
                return -1
            keys += inner
        elif (kind is int or kind is float) and not INT64_MIN < item < INT64_MAX:
            return -1
    return keys


def _refuse(path, message):
    raise JsonRefused(path, message) from None


def _walk(root, where, *, nul, strings):
    """Depth, numbers and (when the body escapes one) bad characters, without recursion.

    A path is kept as a ``(parent, key)`` chain and spelled out only for the answer.
    """
    stack = [(root, None, 0)]
    pop, push, extend = stack.pop, stack.append, stack.extend
    while stack:
        value, trail, depth = pop()
        kind = type(value)
        if kind is dict or kind is list:
            if depth >= JSON_MAX_DEPTH:
                _refuse(_path(trail, where), DEPTH_MESSAGE)
            depth += 1
            if kind is list:
                extend([(item, (trail, index), depth) for index, item in enumerate(value)])
                continue
            for key, item in value.items():
                if strings and (problem := _string_problem(key, nul)):
                    _refuse(_path((trail, key), where), problem)
                push((item, (trail, key), depth))
        elif kind is str:
            if strings and (problem := _string_problem(value, nul)):
                _refuse(_path(trail, where), problem)
        elif (kind is int or kind is float) and not INT64_MIN <= value <= INT64_MAX:
            _refuse(_path(trail, where), RANGE_MESSAGE)


def _path(trail, where):
    """``traces[0].metadata.n`` from a ``(parent, key)`` chain; ``where`` alone for the root."""
    keys = []
    while trail is not None:
        trail, key = trail
        keys.append(key)
    text = ""
    for key in reversed(keys):
        text += f"[{key}]" if isinstance(key, int) else (f".{key}" if text else key)
    text = text or where
    return text.replace("\x00", "\\u0000").encode("utf-8", "backslashreplace").decode("utf-8")


def _string_problem(text, nul):
    if nul and "\x00" in text:
        return NUL_MESSAGE
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return SURROGATE_MESSAGE
    return None


def json_safe(value):
    """``value`` with every integer outside the 64-bit range replaced by its decimal text.

    For values read back from the database: a row stored before the range rule must not
    break the answers that show it. Returns ``value`` itself when nothing needed a change.
    """
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value if INT64_MIN <= value <= INT64_MAX else str(value)
    if isinstance(value, dict):
        return {key: json_safe(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(item) for item in value]
    return value
