"""The rules a judge configuration must meet, as a list of ``{field, message}``.

Pure: ``scoring.judge.services.judge_configure`` raises ``Invalid`` with this list, and
the admin and page forms show the same messages next to their fields.

- ``endpoint``: an ``http://`` or ``https://`` base URL with a host, no user or
  password, no query or fragment (the key goes in ``api_key``, never in the URL).
- ``endpoint`` and ``model`` are given together, or both left blank (the judge is off).
- ``api_key``: printable ASCII without spaces (it travels in an HTTP header), at most
  1000 characters; empty means no ``Authorization`` header.
- ``timeout_seconds``: an integer in 1..300; ``max_concurrency``: an integer in 1..32.
- ``criteria``: at most 100, ``{id: question}``; an id is lowercase snake_case of
  1..64 characters starting with a letter and is not the id of a built-in scorer or
  agent check; a question is one line of 1..2000 characters.
"""

import re
from urllib.parse import urlsplit

from checks.scorers.registry import SCORERS

from .spec import MAX_CONCURRENCY_RANGE, TIMEOUT_SECONDS_RANGE

ENDPOINT_MAX_CHARS = 500
MODEL_MAX_CHARS = 200
API_KEY_MAX_CHARS = 1000
QUESTION_MAX_CHARS = 2000
MAX_CRITERIA = 100
CRITERION_ID_RE = re.compile(r"[a-z][a-z0-9_]{0,63}")
_HEADER_SAFE_RE = re.compile(r"[\x21-\x7e]*")
_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f]")


def judge_config_errors(*, endpoint, model, api_key, timeout_seconds, criteria, max_concurrency):
    """Every problem of a judge configuration, as ``[{"field", "message"}]`` (empty when valid).

    Strings are checked as given: callers strip surrounding whitespace first.
    """
    errors = []

    def add(field, message):
        errors.append({"field": field, "message": message})

    for problem in _endpoint_problems(endpoint):
        add("endpoint", problem)
    if not isinstance(model, str):
        add("model", "must be a string")
    elif len(model) > MODEL_MAX_CHARS:
        add("model", f"must be at most {MODEL_MAX_CHARS} characters")
    elif _CONTROL_RE.search(model):
        add("model", "must not contain control characters")
    if isinstance(endpoint, str) and isinstance(model, str) and bool(endpoint) != bool(model):
        field = "model" if endpoint else "endpoint"
        add(field, "give both endpoint and model, or leave both blank to turn the judge off")
    if api_key is not None:
        if not isinstance(api_key, str):
            add("api_key", "must be a string")
        elif len(api_key) > API_KEY_MAX_CHARS:
            add("api_key", f"must be at most {API_KEY_MAX_CHARS} characters")
        elif not _HEADER_SAFE_RE.fullmatch(api_key):
            # Never echo the key: it is write-only even in an error.
            add("api_key", "must be printable ASCII without spaces (it is sent in an HTTP header)")
    _check_int(add, "timeout_seconds", timeout_seconds, TIMEOUT_SECONDS_RANGE)
    _check_int(add, "max_concurrency", max_concurrency, MAX_CONCURRENCY_RANGE)
    for field, message in _criteria_problems(criteria):
        add(field, message)
    return errors


def _endpoint_problems(endpoint):
    if not isinstance(endpoint, str):
        return ["must be a string"]
    if not endpoint:
        return []
    if len(endpoint) > ENDPOINT_MAX_CHARS:
        return [f"must be at most {ENDPOINT_MAX_CHARS} characters"]
    if _CONTROL_RE.search(endpoint) or " " in endpoint:
        return ["must be a URL without spaces or control characters"]
    try:
        parts = urlsplit(endpoint)
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        return ["must be a valid URL, e.g. http://localhost:11434/v1"]
    if parts.scheme not in ("http", "https"):
        return ["must start with http:// or https://, e.g. http://localhost:11434/v1"]
    if not parts.hostname:
        return ["must name a host, e.g. http://localhost:11434/v1"]
    if parts.username is not None or parts.password is not None:
        return ["must not carry a user or password: put the key in api_key"]
    if parts.query or parts.fragment or endpoint.endswith(("?", "#")):
        return ["must be a base URL without a query or fragment; calls go to {endpoint}/chat/completions"]
    return []


def _check_int(add, field, value, bounds):
    low, high = bounds
    if isinstance(value, bool) or not isinstance(value, int):
        add(field, f"must be an integer from {low} to {high}")
    elif not low <= value <= high:
        add(field, f"must be from {low} to {high}; got {value}")


def _criteria_problems(criteria):
    if not isinstance(criteria, dict):
        yield "criteria", "must be an object {id: question}"
        return
    if len(criteria) > MAX_CRITERIA:
        yield "criteria", f"at most {MAX_CRITERIA} criteria; got {len(criteria)}"
    for criterion_id, question in criteria.items():
        field = f"criteria.{criterion_id}"
        if not isinstance(criterion_id, str) or not CRITERION_ID_RE.fullmatch(criterion_id):
            yield (
                field,
                f"{criterion_id!r} is not a valid id: use lowercase letters, digits and underscores, "
                "starting with a letter, at most 64 characters",
            )
        elif criterion_id in SCORERS:
            yield field, f"{criterion_id!r} is the id of a built-in scorer; choose another id"
        if not isinstance(question, str) or not question.strip():
            yield field, "the question must be a non-empty string"
        elif len(question) > QUESTION_MAX_CHARS:
            yield field, f"the question must be at most {QUESTION_MAX_CHARS} characters; got {len(question)}"
        elif _CONTROL_RE.search(question):
            yield field, "the question must be one line without control characters"
