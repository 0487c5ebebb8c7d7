"""Validate and normalise runs as clients send them, naming every bad field.

``runs_validate`` returns the runs of a request ready to write, or raises ``Invalid``
whose ``errors`` list names each bad item by index and field
(``traces[3].spans[0].kind``). Valid runs take the compiled fast path; only a failing
run is walked again (jsonschema) to describe all of its errors. Nothing here touches the database.
"""

import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal

import orjson
from jsonschema import Draft7Validator

from datasets.run_check import run_conforms
from datasets.run_schema import MAX_COST_CENTS, MAX_LATENCY_MS, RUN_SCHEMA
from evalsite.errors import Invalid

_slow_validator = Draft7Validator(RUN_SCHEMA)
_MAX_ERRORS = 200


@dataclass(slots=True)
class SpanIn:
    span_id: str
    parent_span_id: str | None
    position: int
    kind: str
    name: str
    input: object
    output: object
    status: str
    error: str | None
    started_at: datetime | None
    ended_at: datetime | None
    latency_ms: int | None
    cost_cents: Decimal | None
    model: str | None
    usage: dict | None
    attributes: dict


# What ties runs of one chat, end user or thread together (the runs list filters on them).
RUN_LINKS = ("session_id", "user_id", "conversation_id")


@dataclass(slots=True)
class RunIn:
    index: int
    where: str  # how errors name this run: "traces[3]" in a batch, "" for a single run
    trace_id: str
    name: str
    experiment: str | None
    dataset: str | None
    case: str | int | None
    trial: int | None
    session_id: str | None
    user_id: str | None
    conversation_id: str | None
    input: object
    output: object
    status: str
    error: str | None
    started_at: datetime | None
    ended_at: datetime | None
    latency_ms: int | None
    cost_cents: Decimal | None
    metadata: dict
    tags: list
    spans: list
    content_hash: str


def runs_validate(payload, *, max_batch):
    """``(runs, is_batch)`` for a request body; raises ``Invalid`` listing every error."""
    if not isinstance(payload, dict):
        raise Invalid(
            'The body must be a JSON object: one run, or {"traces": [...]}.',
            errors=[{"field": None, "message": "must be a JSON object"}],
        )
    if "traces" in payload:
        items = payload["traces"]
        errors = []
        extra = sorted(set(payload) - {"traces"})
        errors.extend({"field": name, "message": "is not a known field (a batch has only 'traces')"} for name in extra)
        if not isinstance(items, list):
            errors.append({"field": "traces", "message": "must be an array of runs"})
        elif not items:
            errors.append({"field": "traces", "message": "must hold at least one run"})
        elif len(items) > max_batch:
            errors.append({"field": "traces", "message": f"holds {len(items)} runs; at most {max_batch} per request"})
        if errors:
            raise Invalid("The batch is invalid; nothing was written.", errors=errors)
        return _items_validate(items, prefix="traces"), True
    return _items_validate([payload], prefix=None), False


def _items_validate(items, *, prefix):
    runs = []
    errors = []
    first_by_id = {}
    for index, item in enumerate(items):
        where = f"{prefix}[{index}]" if prefix else ""
        item_errors = [] if run_conforms(item) else _schema_errors(item, where)
        if not item_errors:
            run, item_errors = _run_normalise(item, index, where)
        if item_errors:
            errors.extend(item_errors)
        else:
            earlier = first_by_id.get(run.trace_id)
            if earlier is None:
                first_by_id[run.trace_id] = run
                runs.append(run)
            elif earlier.content_hash != run.content_hash:
                errors.append(
                    {
                        "field": _join(where, "trace_id"),
                        "message": f"repeats trace_id {run.trace_id!r} of item {earlier.index} with different content",
                    }
                )
        if len(errors) >= _MAX_ERRORS:
            break
    if errors:
        noun = "batch" if prefix else "run"
        raise Invalid(f"The {noun} is invalid; nothing was written.", errors=errors[:_MAX_ERRORS])
    return runs


def _run_normalise(item, index, where):
    errors = []
    started_at = _timestamp(item, "started_at", where, errors)
    ended_at = _timestamp(item, "ended_at", where, errors)
    if started_at and ended_at and ended_at < started_at:
        errors.append({"field": _join(where, "ended_at"), "message": "is before started_at"})

    spans = _spans_normalise(item.get("spans") or (), where, errors)
    if errors:
        return None, errors

    latency_ms = _int_or_none(item.get("latency_ms"))
    if latency_ms is None and started_at and ended_at:
        latency_ms = _millis_between(started_at, ended_at)
        if latency_ms > MAX_LATENCY_MS:
            return None, [_latency_over(where, latency_ms)]
    cost = item.get("cost_cents")
    cost_cents = _decimal(cost) if cost is not None else _span_cost_total(spans)
    if cost_cents is not None and cost_cents > MAX_COST_CENTS:
        return None, [_cost_over(where, cost_cents)]
    if started_at is None:
        started_at = min((s.started_at for s in spans if s.started_at), default=None)
    run = RunIn(
        index=index,
        where=where,
        trace_id=item["trace_id"],
        name=item.get("name", ""),
        experiment=item.get("experiment"),
        dataset=item.get("dataset"),
        case=item.get("case"),
        trial=int(item["trial"]) if item.get("trial") is not None else None,
        **{key: item.get(key) for key in RUN_LINKS},
        input=item.get("input"),
        output=item.get("output"),
        status=item.get("status", "ok"),
        error=item.get("error"),
        started_at=started_at,
        ended_at=ended_at,
        latency_ms=latency_ms,
        cost_cents=cost_cents,
        metadata=item.get("metadata", {}),
        tags=item.get("tags", []),
        spans=spans,
        content_hash=content_hash(item),
    )
    return run, []


def _spans_normalise(raw_spans, where, errors):
    """The run's spans, with repeated ids and parents outside the run added to ``errors``."""
    spans = []
    seen = set()
    for position, raw in enumerate(raw_spans):
        span = _span_normalise(raw, position, where, errors)
        if span.span_id in seen:
            field = _join(where, f"spans[{position}].span_id")
            errors.append({"field": field, "message": f"repeats span_id {span.span_id!r}"})
        seen.add(span.span_id)
        spans.append(span)
    for position, span in enumerate(spans):
        if span.parent_span_id == span.span_id:
            errors.append({"field": _join(where, f"spans[{position}].parent_id"), "message": "names the span itself"})
        elif span.parent_span_id is not None and span.parent_span_id not in seen:
            errors.append(
                {
                    "field": _join(where, f"spans[{position}].parent_id"),
                    "message": f"names span {span.parent_span_id!r}, which is not in this run",
                }
            )
    return spans


def _span_normalise(raw, position, run_where, errors):
    where = _join(run_where, f"spans[{position}]")
    started_at = _timestamp(raw, "started_at", where, errors)
    ended_at = _timestamp(raw, "ended_at", where, errors)
    if started_at and ended_at and ended_at < started_at:
        errors.append({"field": _join(where, "ended_at"), "message": "is before started_at"})
    latency_ms = _int_or_none(raw.get("latency_ms"))
    if latency_ms is None and started_at and ended_at and ended_at >= started_at:
        latency_ms = _millis_between(started_at, ended_at)
        if latency_ms > MAX_LATENCY_MS:
            errors.append(_latency_over(where, latency_ms))
    cost = raw.get("cost_cents")
    return SpanIn(
        span_id=raw["span_id"],
        parent_span_id=raw.get("parent_id"),
        position=position,
        kind=raw.get("kind", "other"),
        name=raw.get("name", ""),
        input=raw.get("input"),
        output=raw.get("output"),
        status=raw.get("status", "ok"),
        error=raw.get("error"),
        started_at=started_at,
        ended_at=ended_at,
        latency_ms=latency_ms,
        cost_cents=None if cost is None else _decimal(cost),
        model=raw.get("model"),
        usage=raw.get("usage"),
        attributes=raw.get("attributes", {}),
    )


def content_hash(item):
    """SHA-256 of the run's canonical JSON (keys sorted): equal content, equal hash."""
    return hashlib.sha256(orjson.dumps(item, option=orjson.OPT_SORT_KEYS)).hexdigest()


def _timestamp(obj, key, where, errors):
    value = obj.get(key)
    if value is None:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        errors.append({"field": _join(where, key), "message": f"is not an RFC 3339 timestamp: {value!r}"})
        return None
    if parsed.tzinfo is None:
        errors.append({"field": _join(where, key), "message": f"has no timezone: {value!r} (add Z or an offset)"})
        return None
    try:
        # Stored in UTC: an offset that pushes the instant past year 1 or 9999 cannot be read back.
        parsed.astimezone(UTC)
    except OverflowError:
        errors.append({"field": _join(where, key), "message": f"is outside the years 1 to 9999 in UTC: {value!r}"})
        return None
    return parsed


def _int_or_none(value):
    # JSON Schema counts 3.0 as an integer; the column wants 3.
    return None if value is None else int(value)


def _millis_between(start, end):
    return round((end - start).total_seconds() * 1000)


def _decimal(number):
    return Decimal(repr(round(number, 6))) if isinstance(number, float) else Decimal(number)


def _cost_over(where, total):
    message = f"is the sum of the spans' costs, {total}, over the maximum of {MAX_COST_CENTS}"
    return {"field": _join(where, "cost_cents"), "message": message}


def _latency_over(where, latency_ms):
    message = f"is computed from started_at and ended_at as {latency_ms}, over the maximum of {MAX_LATENCY_MS}"
    return {"field": _join(where, "latency_ms"), "message": message}


def _span_cost_total(spans):
    costs = [s.cost_cents for s in spans if s.cost_cents is not None]
    return sum(costs, Decimal(0)) if costs else None


def field_name(where, name):
    """``traces[3].case`` in a batch, ``case`` for a single run."""
    return f"{where}.{name}" if where else name


_join = field_name


def _schema_errors(item, where):
    errors = []
    for error in sorted(_slow_validator.iter_errors(item), key=lambda e: list(map(str, e.absolute_path))):
        path = where
        for part in error.absolute_path:
            path = f"{path}[{part}]" if isinstance(part, int) else _join(path, part)
        errors.extend(_describe(error, path))
    return errors


def _describe(error, path):
    kind = error.validator
    if kind == "required":
        missing = [name for name in error.validator_value if name not in error.instance]
        return [{"field": _join(path, name), "message": "is required"} for name in missing]
    if kind == "additionalProperties":
        known = error.schema.get("properties", {})
        extra = sorted(name for name in error.instance if name not in known)
        return [{"field": _join(path, name), "message": "is not a known field"} for name in extra]
    field = path or None
    if kind == "type":
        expected = error.validator_value
        expected = " or ".join(expected) if isinstance(expected, list) else expected
        return [{"field": field, "message": f"must be of type {expected}"}]
    if kind == "enum":
        return [{"field": field, "message": "must be one of " + ", ".join(map(str, error.validator_value))}]
    messages = {
        "minLength": "must not be empty"
        if error.validator_value == 1
        else f"must be at least {error.validator_value} characters",
        "maxLength": f"must be at most {error.validator_value} characters",
        "minimum": f"must be at least {error.validator_value}",
        "maximum": f"must be at most {error.validator_value}",
        "maxItems": f"must hold at most {error.validator_value} items",
        "minItems": f"must hold at least {error.validator_value} items",
    }
    return [{"field": field, "message": messages.get(kind, error.message)}]
