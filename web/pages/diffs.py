"""Expected beside actual, as a reviewer reads the difference: words for text, keys for JSON objects.

Pure functions over stored values; the templates colour what they return.
"""

import difflib
import json
import re

from checks.field_diff import MAX_CHANGES, answer_diff, change_text, tool_calls_diff

_WORDS = re.compile(r"\s+|[^\s]+")


def _text(value):
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True)


def word_diff(expected, actual):
    """``[(op, text)]`` turning ``expected`` into ``actual`` word by word; op is ``equal``, ``delete`` or
    ``insert`` (a replacement is a delete then an insert). Whitespace is kept, so the pieces join back."""
    old, new = _WORDS.findall(_text(expected)), _WORDS.findall(_text(actual))
    pieces = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if op == "equal":
            pieces.append(("equal", "".join(old[i1:i2])))
            continue
        if i2 > i1:
            pieces.append(("delete", "".join(old[i1:i2])))
        if j2 > j1:
            pieces.append(("insert", "".join(new[j1:j2])))
    return pieces


def key_diff(expected, actual):
    """``[{"key", "expected", "actual", "state"}]`` of two JSON objects, by key; state is ``same``,
    ``changed``, ``missing`` (expected only) or ``extra`` (actual only)."""
    rows = []
    for key in sorted(set(expected) | set(actual)):
        if key not in actual:
            state = "missing"
        elif key not in expected:
            state = "extra"
        else:
            state = "same" if expected[key] == actual[key] else "changed"
        rows.append({"key": key, "expected": expected.get(key), "actual": actual.get(key), "state": state})
    return rows


def value_diff(expected, actual):
    """``("keys", rows)`` when both values are JSON objects (a JSON text counts), else ``("words", pieces)``."""
    parsed = [_parsed(v) for v in (expected, actual)]
    if all(isinstance(p, dict) for p in parsed):
        return "keys", key_diff(*parsed)
    return "words", word_diff(expected, actual)


def _parsed(value):
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _changes_view(changes):
    return {"lines": [change_text(c) for c in changes[:MAX_CHANGES]], "more": max(0, len(changes) - MAX_CHANGES)}


def answers_field_diff(old, new):
    """What differs between two runs' answers (``runs_answers`` items), for a page: ``{"answer":
    {"kind", "lines", "more"}, "calls": [{"index", "op", "old_name", "new_name", "lines", "more"}]}``,
    ``kind`` as ``checks.field_diff.answer_diff``; None when a run is missing or nothing differs."""
    if old is None or new is None:
        return None
    kind, items = answer_diff(old["output"], new["output"])
    answer = {"kind": kind, **(_changes_view(items) if kind == "fields" else {"lines": [], "more": 0})}
    if kind == "text":
        answer["text"] = items[:MAX_CHANGES]
    calls = [{**row, **_changes_view(row["changes"])} for row in tool_calls_diff(old["tool_calls"], new["tool_calls"])]
    if kind == "equal" and not calls:
        return None
    return {"answer": answer, "calls": calls}
