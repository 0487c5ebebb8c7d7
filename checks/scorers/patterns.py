"""Regular expressions given by users, run in linear time, and the ``regex`` scorer.

Patterns come from golden cases and requests, so a pattern must never be able to stall
a worker (``(a+)+$`` against a long answer takes exponential time in a backtracking
engine). They are compiled with RE2 (``google-re2``), which matches in time linear in
the text and refuses what it cannot do so (backreferences, lookarounds): such a
pattern is a 400 naming the field when the case or the request is written.

A pattern may carry ``flags``: ``i`` (ignore case), ``m`` (``^``/``$`` at line ends),
``s`` (``.`` matches a newline). Matching is a search: anchor with ``^``/``$`` for a
whole-text match.

regex: the answer (a string, or every string inside a structured answer) matches
``pattern``; with ``negate`` it must not. Config ``{"pattern", "flags", "negate"}`` or
the case's expectation ``output_regex`` (a pattern, or that object).
"""

import functools

import re2

from .base import Result, Scorer
from .values import answer_texts, is_empty, preview

FLAGS = {"i": "i", "m": "m", "s": "s"}
MAX_PATTERN_CHARS = 2000
_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # a bad pattern is reported to the user, not logged by the engine


class PatternError(ValueError):
    pass


@functools.lru_cache(maxsize=512)
def pattern_compile(pattern, flags=""):
    """The compiled pattern; raises ``PatternError`` with a readable reason when RE2 refuses it."""
    if not isinstance(pattern, str):
        raise PatternError("must be a string")
    if len(pattern) > MAX_PATTERN_CHARS:
        raise PatternError(f"must be at most {MAX_PATTERN_CHARS} characters")
    unknown = sorted(set(flags) - set(FLAGS))
    if unknown:
        raise PatternError(f"unknown flag {unknown[0]!r}; flags are i, m and s")
    prefix = f"(?{''.join(sorted(set(flags)))})" if flags else ""
    try:
        return re2.compile(prefix + pattern, _OPTIONS)
    except re2.error as exc:
        reason = exc.args[0].decode() if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        raise PatternError(f"is not a pattern this server runs in linear time (RE2): {reason}") from None


def pattern_problem(pattern, flags=""):
    """Why ``pattern`` cannot be used, or None."""
    try:
        pattern_compile(pattern, flags)
    except PatternError as exc:
        return str(exc)
    return None


def regex_spec(value):
    """``{"pattern", "flags", "negate"}`` from an expectation: a pattern string or that object."""
    if isinstance(value, str):
        return {"pattern": value, "flags": "", "negate": False}
    return {"pattern": value.get("pattern"), "flags": value.get("flags", ""), "negate": bool(value.get("negate"))}


def regex(run, config):
    spec = regex_spec(config)
    compiled = pattern_compile(spec["pattern"], spec["flags"])
    detail = {"pattern": spec["pattern"], "flags": spec["flags"], "negate": spec["negate"]}
    if is_empty(run.output):
        return Result.verdict(False, "the run produced no answer", detail)
    hits = [where for where, text in answer_texts(run.output) if compiled.search(text)]
    detail["answer"] = preview(run.output)
    if spec["negate"]:
        if hits:
            detail["matched_at"] = hits
            return Result.verdict(False, f"the answer matches {spec['pattern']!r}, which it must not", detail)
        return Result.verdict(True, f"the answer does not match {spec['pattern']!r}", detail)
    if hits:
        detail["matched_at"] = hits
        return Result.verdict(True, f"the answer matches {spec['pattern']!r}", detail)
    return Result.verdict(False, f"the answer does not match {spec['pattern']!r}", detail)


def _regex_from_case(run):
    value = run.expectations.get("output_regex")
    return None if value is None else regex_spec(value)


def regex_config_problems(config):
    """Problems RE2 finds in a regex config (the JSON Schema checks the shape)."""
    if not isinstance(config, dict) or not isinstance(config.get("pattern"), str):
        return []
    flags = config.get("flags", "")
    problem = pattern_problem(config["pattern"], flags if isinstance(flags, str) else "")
    return [f"regex.pattern: {problem}"] if problem else []


REGEX_SCHEMA = {
    "type": "object",
    "properties": {
        "pattern": {"type": "string", "minLength": 1, "maxLength": MAX_PATTERN_CHARS},
        "flags": {"type": "string", "pattern": "^[ims]*$", "default": ""},
        "negate": {"type": "boolean", "default": False},
    },
    "required": ["pattern"],
    "additionalProperties": False,
}

SCORERS = (
    Scorer(
        id="regex",
        description="The answer matches a regular expression (RE2, linear time), or with negate must not.",
        version="1",
        kind="builtin",
        needs_config=True,
        config_schema=REGEX_SCHEMA,
        category="output",
        gated_by="output_regex",
        expectation_keys=("output_regex",),
        func=regex,
        case_config=_regex_from_case,
        config_problems=regex_config_problems,
        reads="nothing",
    ),
)
