"""Builders of request payloads and stored objects for tests."""

import itertools

from datasets.ingestion import traces_ingest
from datasets.models import Trace

_counter = itertools.count(1)


def run_payload(trace_id=None, *, spans=None, **fields):
    """A valid run as a client sends it (ARCHITECTURE §9), with overrides."""
    trace_id = trace_id or f"run-{next(_counter)}"
    payload = {
        "trace_id": trace_id,
        "name": "reservo",
        "input": "¿Cuánto cuesta Focus pro 3 horas?",
        "output": "Focus pro 3h cuesta 75,00 €.",
        "status": "ok",
        "started_at": "2026-11-30T10:00:00Z",
        "latency_ms": 1200,
        "cost_cents": 0.84,
        "spans": spans
        if spans is not None
        else [
            {"span_id": "s1", "kind": "llm", "name": "model", "latency_ms": 400, "model": "scripted"},
            {
                "span_id": "s2",
                "parent_id": "s1",
                "kind": "tool",
                "name": "quote_room",
                "input": {"room": "Focus", "tier": "pro", "hours": 3},
                "output": {"total_cents": 7500},
                "latency_ms": 50,
                "cost_cents": 0,
            },
        ],
    }
    payload.update(fields)
    return payload


def trace_create(project, trace_id=None, **fields):
    """Store one run through the ingestion service; returns the Trace."""
    payload = run_payload(trace_id, **fields)
    traces_ingest(project=project, payload=payload)
    return Trace.objects.get(project=project, trace_id=payload["trace_id"])
