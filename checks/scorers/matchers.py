"""Expected values that are rules instead of literals, and the comparison that applies them.

An expected value is a literal (compared as JSON: ``3 == 3.0``, ``"3" != 3``) or a
matcher, an object with one ``$`` key, at any depth of objects and lists:

- ``{"$regex": "^ana@"}``: a string the pattern finds a match in (RE2, ``flags`` allowed);
- ``{"$approx": 3.0, "tol": 0.01}``: a number within ``tol`` of it (default 1e-9);
- ``{"$in": ["Focus", "Studio"]}``: a value equal to one of these;
- ``{"$any": true}``: anything, as long as it is there.

``value_mismatches(expected, actual, path, exact_keys)`` returns every difference as
``(path, text)``: ``member: expected 'Ana', got 'Anna'``, ``hours: expected 3 (±0.01),
got 4``, ``room: missing (expected 'Focus')``; with ``exact_keys`` an object may not carry
keys the expected one does not list (``vip: unexpected argument``).
"""

from .patterns import PatternError, pattern_compile
from .values import json_equal, preview

MATCHER_KEYS = ("$regex", "$approx", "$in", "$any")
DEFAULT_TOLERANCE = 1e-9


def is_matcher(value):
    return isinstance(value, dict) and any(key in value for key in MATCHER_KEYS)


def matcher_problems(value, path="args"):
    """Why the matchers inside ``value`` cannot be used: ``[(path, message)]`` (empty when fine)."""
    problems = []
    if is_matcher(value):
        keys = [k for k in value if k in MATCHER_KEYS]
        allowed = {"$regex": {"$regex", "flags"}, "$approx": {"$approx", "tol"}, "$in": {"$in"}, "$any": {"$any"}}
        if len(keys) > 1:
            return [(path, f"has {' and '.join(keys)}: a matcher has exactly one $ key")]
        key = keys[0]
        extra = sorted(set(value) - allowed[key])
        if extra:
            problems.append((path, f"{key} does not take {extra[0]!r}"))
        problems.extend(_matcher_value_problems(key, value, path))
    elif isinstance(value, dict):
        for key, item in value.items():
            problems.extend(matcher_problems(item, f"{path}.{key}"))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            problems.extend(matcher_problems(item, f"{path}[{index}]"))
    return problems


def _matcher_value_problems(key, value, path):
    if key == "$regex":
        try:
            pattern_compile(value["$regex"], value.get("flags", "") if isinstance(value.get("flags", ""), str) else "?")
        except PatternError as exc:
            return [(f"{path}.$regex", str(exc))]
    elif key == "$approx":
        numbers = [value["$approx"], value.get("tol", 0)]
        if any(isinstance(n, bool) or not isinstance(n, int | float) for n in numbers) or value.get("tol", 0) < 0:
            return [(path, "$approx takes a number and a tol of 0 or more")]
    elif key == "$in" and not isinstance(value["$in"], list):
        return [(f"{path}.$in", "must be a list of the values allowed")]
    elif key == "$any" and value["$any"] is not True:
        return [(f"{path}.$any", "must be true")]
    return []


def describe(expected):
    """How an expected value reads in a mismatch: ``'Ana'``, ``3 (±0.01)``, ``a match of '^a'``."""
    if is_matcher(expected):
        if "$regex" in expected:
            return f"a match of {expected['$regex']!r}"
        if "$approx" in expected:
            return f"{expected['$approx']!r} (±{expected.get('tol', DEFAULT_TOLERANCE)!r})"
        if "$in" in expected:
            return f"one of {expected['$in']!r}"
        return "any value"
    return repr(preview(expected, 80))


def _matches(expected, actual):
    if "$any" in expected:
        return True
    if "$regex" in expected:
        return isinstance(actual, str) and bool(
            pattern_compile(expected["$regex"], expected.get("flags", "")).search(actual)
        )
    if "$approx" in expected:
        if isinstance(actual, bool) or not isinstance(actual, int | float):
            return False
        return abs(actual - expected["$approx"]) <= expected.get("tol", DEFAULT_TOLERANCE)
    return any(json_equal(option, actual) for option in expected["$in"])


def value_mismatches(expected, actual, path, *, exact_keys=False, unexpected="unexpected argument"):
    """Every difference between ``expected`` (literals and matchers) and ``actual``, as ``(path, text)``.

    With ``exact_keys`` a key of ``actual`` that ``expected`` does not list is a difference worded ``unexpected``.
    """
    if is_matcher(expected):
        return [] if _matches(expected, actual) else [(path, f"expected {describe(expected)}, got {_shown(actual)}")]
    if isinstance(expected, dict) and isinstance(actual, dict):
        out = []
        for key, want in expected.items():
            if key not in actual:
                out.append((f"{path}.{key}", f"missing (expected {describe(want)})"))
            else:
                out.extend(
                    value_mismatches(want, actual[key], f"{path}.{key}", exact_keys=exact_keys, unexpected=unexpected)
                )
        if exact_keys:
            out.extend((f"{path}.{key}", unexpected) for key in actual if key not in expected)
        return out
    if isinstance(expected, list) and isinstance(actual, list) and len(expected) == len(actual):
        out = []
        for index, (want, got) in enumerate(zip(expected, actual, strict=True)):
            out.extend(value_mismatches(want, got, f"{path}[{index}]", exact_keys=exact_keys, unexpected=unexpected))
        return out
    if isinstance(expected, dict | list) or not json_equal(expected, actual):
        return [(path, f"expected {describe(expected)}, got {_shown(actual)}")]
    return []


def _shown(actual):
    return repr(preview(actual, 80))
