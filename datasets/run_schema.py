"""The published JSON Schema of a run as ``POST /v1/api/traces`` takes it.

One schema serves three purposes: it is the request body in the OpenAPI document, it
is walked (jsonschema) to name every bad field of a failing run, and it feeds the
limits and enums of the fast check in ``run_check`` (kept equivalent to it by a
property-based test), so documentation and validation cannot drift apart. Unknown fields are refused: a typo such as ``ouput`` is a 400, not data
silently dropped.
"""

MAX_SPANS_PER_RUN = 5000
MAX_ID_LENGTH = 200
MAX_LATENCY_MS = 10**12
# The column holds 8 digits before the point (max_digits=14, decimal_places=6).
MAX_COST_CENTS = 10**8 - 1
MAX_TRIAL = 10_000

_nullable_string = {"type": ["string", "null"]}
_timestamp = {
    "type": ["string", "null"],
    "description": "RFC 3339 timestamp with a timezone, e.g. 2026-11-30T10:00:00Z.",
}
_latency = {"type": ["integer", "null"], "minimum": 0, "maximum": MAX_LATENCY_MS}
_cost = {"type": ["number", "null"], "minimum": 0, "maximum": MAX_COST_CENTS}
_any = {"description": "Any JSON value."}

SPAN_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["span_id"],
    "properties": {
        "span_id": {"type": "string", "minLength": 1, "maxLength": 100, "description": "Unique within the run."},
        "parent_id": {"type": ["string", "null"], "maxLength": 100, "description": "span_id of the parent span."},
        "kind": {"enum": ["llm", "tool", "retrieval", "agent", "other"], "default": "other"},
        "name": {"type": "string", "maxLength": 200, "description": "For a tool call: the tool's name."},
        "input": _any,
        "output": _any,
        "status": {"enum": ["ok", "error"], "default": "ok"},
        "error": _nullable_string,
        "started_at": _timestamp,
        "ended_at": _timestamp,
        "latency_ms": _latency,
        "cost_cents": _cost,
        "model": {"type": ["string", "null"], "maxLength": 200},
        "usage": {"type": ["object", "null"], "description": "Token counts, e.g. {input_tokens, output_tokens}."},
        "attributes": {"type": "object"},
    },
}

RUN_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["trace_id"],
    "properties": {
        "trace_id": {
            "type": "string",
            "minLength": 1,
            "maxLength": MAX_ID_LENGTH,
            "description": "The client's id of the run, unique within the project.",
        },
        "name": {"type": "string", "maxLength": 200},
        "experiment": {
            "type": ["string", "null"],
            "minLength": 1,
            "maxLength": 200,
            "description": "Experiment (agent version) name; created on first use.",
        },
        "dataset": {"type": ["string", "null"], "minLength": 1, "maxLength": 100},
        "case": {
            "type": ["string", "integer", "null"],
            "description": "The golden case this run answers: a case id, or a case name with `dataset` "
            "(or the experiment's dataset).",
        },
        "trial": {
            "type": ["integer", "null"],
            "minimum": 1,
            "maximum": MAX_TRIAL,
            "description": "Which try of its case this run is within its experiment (1, 2, ...). Without it, the "
            "gate numbers a case's runs in the order they started; a later run of the same trial supersedes "
            "an earlier one.",
        },
        "session_id": {
            "type": ["string", "null"],
            "maxLength": 200,
            "description": "The session (a chat, a job) the run belongs to; the runs list filters on it.",
        },
        "user_id": {"type": ["string", "null"], "maxLength": 200, "description": "The end user the run served."},
        "conversation_id": {
            "type": ["string", "null"],
            "maxLength": 200,
            "description": "The conversation (thread) within the session.",
        },
        "input": _any,
        "output": {"description": "The run's final answer (any JSON value)."},
        "status": {"enum": ["ok", "error"], "default": "ok"},
        "error": _nullable_string,
        "started_at": _timestamp,
        "ended_at": _timestamp,
        "latency_ms": _latency,
        "cost_cents": _cost,
        "metadata": {"type": "object"},
        "tags": {"type": "array", "maxItems": 100, "items": {"type": "string", "maxLength": 100}},
        "spans": {"type": "array", "maxItems": MAX_SPANS_PER_RUN, "items": SPAN_SCHEMA},
    },
}


def batch_schema(max_batch):
    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["traces"],
        "properties": {"traces": {"type": "array", "minItems": 1, "maxItems": max_batch, "items": RUN_SCHEMA}},
    }


def request_schema(max_batch):
    """One run, or ``{"traces": [...]}``: the request body of ``POST /v1/api/traces``."""
    return {"oneOf": [RUN_SCHEMA, batch_schema(max_batch)]}
