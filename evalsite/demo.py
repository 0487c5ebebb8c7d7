"""Data for the local demo project, so a newcomer sees real runs right away."""

from datasets.ingestion import traces_ingest


def demo_data_load(*, project):
    """Load the demo runs into ``project`` (idempotent: stored runs are left as they are)."""
    runs = [
        {
            "trace_id": f"demo-{i}",
            "name": "reservo",
            "input": question,
            "output": answer,
            "status": status,
            "started_at": f"2026-11-30T09:{i:02d}:00Z",
            "latency_ms": 900 + 40 * i,
            "cost_cents": 0.05 + 0.01 * i,
            "spans": [
                {"span_id": "turn-1", "kind": "llm", "name": "model", "latency_ms": 400},
                {"span_id": "tool-1", "parent_id": "turn-1", "kind": "tool", "name": tool, "input": args,
                 "output": result, "status": "error" if status == "error" else "ok", "latency_ms": 150},
            ],
        }  # fmt: skip
        for i, (question, answer, status, tool, args, result) in enumerate(_SAMPLES)
    ]
    traces_ingest(project=project, payload={"traces": runs})


_SAMPLES = [
    ("How much is Focus pro for 3 hours?", "Focus pro for 3 hours is 75.00 EUR.", "ok", "quote_room",
     {"room": "Focus", "tier": "pro", "hours": 3}, {"total_cents": 7500}),
    ("Book the Boardroom pro for Sofia, 1 hour", "Booked: BK-0001.", "ok", "book_room",
     {"room": "Boardroom", "tier": "pro", "hours": 1, "member": "Sofia"}, {"booking_id": "BK-0001"}),
    ("Cancel BK-0404", None, "error", "cancel_booking", {"booking_id": "BK-0404"}, {"error": "unknown booking"}),
]  # fmt: skip
