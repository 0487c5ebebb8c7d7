"""The fast path of run validation: ``run_conforms(item)`` says whether a run satisfies
``RUN_SCHEMA``, about five times faster than the compiled schema.

It only answers yes or no. On no, ``run_validation`` walks the schema itself
(jsonschema) to name every bad field, so the messages always come from the schema.
The two are kept equivalent by a property-based test that feeds both the same
generated runs (tests/datasets/test_run_check.py). Every limit and enum is read from
``run_schema``, so the schema is the one place to change them.
"""

from datasets.run_schema import (
    MAX_COST_CENTS,
    MAX_ID_LENGTH,
    MAX_LATENCY_MS,
    MAX_SPANS_PER_RUN,
    MAX_TRIAL,
    RUN_SCHEMA,
    SPAN_SCHEMA,
)

_RUN_KEYS = frozenset(RUN_SCHEMA["properties"])
_SPAN_KEYS = frozenset(SPAN_SCHEMA["properties"])
_STATUSES = frozenset(RUN_SCHEMA["properties"]["status"]["enum"])
_KINDS = frozenset(SPAN_SCHEMA["properties"]["kind"]["enum"])
_MAX_TAGS = RUN_SCHEMA["properties"]["tags"]["maxItems"]
_MAX_TAG_LENGTH = RUN_SCHEMA["properties"]["tags"]["items"]["maxLength"]


def _max_length(schema, key):
    prop = schema["properties"][key]
    return prop.get("maxLength") or next(
        o["maxLength"] for o in prop.get("anyOf", prop.get("oneOf", ())) if "maxLength" in o
    )


_RUN_NAME = _max_length(RUN_SCHEMA, "name")
_RUN_REFS = (("experiment", _max_length(RUN_SCHEMA, "experiment")), ("dataset", _max_length(RUN_SCHEMA, "dataset")))
_RUN_LINKS = tuple((key, _max_length(RUN_SCHEMA, key)) for key in ("session_id", "user_id", "conversation_id"))
_SPAN_ID = _max_length(SPAN_SCHEMA, "span_id")
_PARENT_ID = _max_length(SPAN_SCHEMA, "parent_id")
_SPAN_NAME = _max_length(SPAN_SCHEMA, "name")
_MODEL = _max_length(SPAN_SCHEMA, "model")


def run_conforms(item):
    """True when ``item`` satisfies RUN_SCHEMA."""
    if type(item) is not dict or not item.keys() <= _RUN_KEYS:
        return False
    get = item.get
    trace_id = get("trace_id")
    if type(trace_id) is not str or not 1 <= len(trace_id) <= MAX_ID_LENGTH:
        return False
    if "name" in item and not _str(item["name"], _RUN_NAME):
        return False
    for key, limit in _RUN_REFS:
        if key in item:
            value = item[key]
            if value is not None and not (type(value) is str and 1 <= len(value) <= limit):
                return False
    for key, limit in _RUN_LINKS:
        if key in item and not _optional_str(item[key], limit):
            return False
    if "case" in item:
        case = item["case"]
        if case is not None and type(case) is not str and not _integer(case):
            return False
    if "status" in item and not _member(item["status"], _STATUSES):
        return False
    trial = get("trial")
    if trial is not None and not (_integer(trial) and 1 <= trial <= MAX_TRIAL):
        return False
    if not _common(item, get):
        return False
    if "metadata" in item and type(item["metadata"]) is not dict:
        return False
    if "tags" in item:
        tags = item["tags"]
        if type(tags) is not list or len(tags) > _MAX_TAGS:
            return False
        for tag in tags:
            if not _str(tag, _MAX_TAG_LENGTH):
                return False
    if "spans" in item:
        spans = item["spans"]
        if type(spans) is not list or len(spans) > MAX_SPANS_PER_RUN:
            return False
        for span in spans:
            if not _span_conforms(span):
                return False
    return True


def _span_conforms(span):
    if type(span) is not dict or not span.keys() <= _SPAN_KEYS:
        return False
    get = span.get
    span_id = get("span_id")
    if type(span_id) is not str or not 1 <= len(span_id) <= _SPAN_ID:
        return False
    if "parent_id" in span and not _optional_str(span["parent_id"], _PARENT_ID):
        return False
    if "kind" in span and not _member(span["kind"], _KINDS):
        return False
    if "name" in span and not _str(span["name"], _SPAN_NAME):
        return False
    if "status" in span and not _member(span["status"], _STATUSES):
        return False
    if not _common(span, get):
        return False
    if "model" in span and not _optional_str(span["model"], _MODEL):
        return False
    if "usage" in span:
        usage = span["usage"]
        if usage is not None and type(usage) is not dict:
            return False
    return not ("attributes" in span and type(span["attributes"]) is not dict)


def _common(obj, get):
    """Fields runs and spans share: error, started_at, ended_at, latency_ms, cost_cents."""
    for key in ("error", "started_at", "ended_at"):
        value = get(key)
        if value is not None and type(value) is not str:
            return False
    latency = get("latency_ms")
    if latency is not None and not (_integer(latency) and 0 <= latency <= MAX_LATENCY_MS):
        return False
    cost = get("cost_cents")
    return cost is None or (type(cost) in (int, float) and 0 <= cost <= MAX_COST_CENTS)


def _member(value, allowed):
    return type(value) is str and value in allowed


def _str(value, limit):
    return type(value) is str and len(value) <= limit


def _optional_str(value, limit):
    return value is None or (type(value) is str and len(value) <= limit)


def _integer(value):
    # JSON Schema counts 3.0 as an integer; booleans are not numbers.
    return type(value) is int or (type(value) is float and value.is_integer())
