"""A JSON body read by orjson on the quick path gets the same answer as the full check.

``checks.json_rules.json_parse`` reads a document with orjson when cheap checks prove it
has nothing to refuse, and otherwise with the standard parser and its hook on every
object. The two must never disagree: random documents, written with repeated keys,
escapes, colons in strings, numbers at the edges of the 64-bit range and nesting around
the limit, get the same value (types included) or the same refusal either way.
"""

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checks.json_rules import (
    _UNSURE,
    INT64_MAX,
    INT64_MIN,
    JSON_MAX_DEPTH,
    JsonRefused,
    _parse_checked,
    _parse_clean,
    json_parse,
)

# Strings rich in what the key count reads: quotes, backslashes, colons and spaces.
TEXT = st.text(alphabet=st.sampled_from(["a", "b", '"', "\\", ":", " ", "\x00", "é", "\ud800"]), max_size=5)
EDGES = [INT64_MIN - 1, INT64_MIN, INT64_MIN + 1, INT64_MAX - 1, INT64_MAX, INT64_MAX + 1, 2**64, -(2**64), 0]
NUMBER = st.one_of(
    st.sampled_from(EDGES),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(["1e400", "-1e400", "-9223372036854775809", "9.223372036854775807e18", "-0", "1E2", "0.5e-3"]),
)
SPACE = st.sampled_from(["", "", " ", "\n", "\t "])


def _text(value):
    """A JSON string of ``value``, with non-ASCII characters escaped or not."""
    return st.booleans().map(lambda ascii_only: json.dumps(value, ensure_ascii=ascii_only))


def _scalar():
    return st.one_of(
        NUMBER.map(lambda n: n if isinstance(n, str) else json.dumps(n)),
        TEXT.flatmap(_text),
        st.sampled_from(["true", "false", "null", "NaN"]),
    )


def _document(children):
    array = st.lists(children, max_size=4).flatmap(lambda items: SPACE.map(lambda s: "[" + f",{s}".join(items) + "]"))
    # Keys from a small set, so that some objects repeat one.
    keys = st.one_of(st.sampled_from(['"a"', '"b"', '"a\\\\"', '":x"', '"\\":"']), TEXT.flatmap(_text))
    pair = st.tuples(keys, SPACE, SPACE, children).map(lambda p: f"{p[0]}{p[1]}:{p[2]}{p[3]}")
    obj = st.lists(pair, max_size=4).map(lambda pairs: "{" + ", ".join(pairs) + "}")
    return st.one_of(array, obj)


DOCUMENTS = st.recursive(_scalar(), _document, max_leaves=25)


def _answer(read, body):
    try:
        value = read(body)
    except JsonRefused as exc:
        return ("refused", exc.field, exc.message, exc.detail)
    return ("value", repr(value))


@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(DOCUMENTS, st.booleans())
def test_the_quick_path_and_the_full_check_agree(document, nul):
    body = document.encode("utf-8", "surrogatepass")
    assert _answer(lambda b: json_parse(b, nul=nul), body) == _answer(lambda b: _parse_checked(b, "body", nul), body)


def nested(levels):
    return "[" * levels + "]" * levels


@pytest.mark.parametrize(
    "body",
    [
        '{"a": 1, "a": 2}',
        '{"a":1,"b":{"a":1,"a":2}}',
        '{"a\\\\":1, "b":1, "b":2}',  # a key ending in a backslash
        '{"a":1, "a" :2}',  # one key spaced from its colon
        '{"x": "say \\":\\" twice", "a": 1, "a": 2}',
        '{"n": -9223372036854775809}',  # orjson reads it as a float equal to -2**63
        '{"n": 18446744073709551616}',
        '{"s": "\\u0000"}',
        '{"s": "\\ud800"}',
        nested(JSON_MAX_DEPTH + 1),
        "1e400",
    ],
)
def test_a_document_with_something_to_refuse_never_takes_the_quick_path(body):
    assert _parse_clean(body.encode()) is _UNSURE
    with pytest.raises(JsonRefused):
        _parse_checked(body.encode(), "body", True)
    with pytest.raises(JsonRefused):
        json_parse(body)


@pytest.mark.parametrize(
    "body",
    [
        '{"traces": [{"trace_id": "r1", "output": "a \\"quoted\\": word", "metadata": {"n": 3, "x": [1, 2.5]}}]}',
        '[":starts with a colon"]',  # counted as a key: a doubt, read the long way
        nested(JSON_MAX_DEPTH),
        '"plain"',
        "9223372036854775807",
    ],
)
def test_a_clean_document_is_read_alike_either_way(body):
    assert json_parse(body) == _parse_checked(body.encode(), "body", True)


def test_a_plain_body_takes_the_quick_path():
    body = b'{"traces": [{"trace_id": "r1", "output": "a \\"quoted\\": word", "metadata": {"n": 3}}]}'
    assert _parse_clean(body) == json.loads(body)
