"""Prometheus metrics: what the services count, and what ``/metrics`` answers.

Counters and histograms are counted where the thing happens (a run ingested, a score
written, a judge call returned, a gate verdict recorded), after the transaction that
made it commits (``counted_on_commit``), so a rolled-back batch counts nothing.

gunicorn and Celery run several processes. With ``PROMETHEUS_MULTIPROC_DIR`` set (one
directory per machine, shared by its web processes and workers, emptied at boot),
``prometheus_client``'s multiprocess mode adds up every process's files at scrape
time; without it, each process answers its own counts (one-process use, tests).

The state of the work (chunks queued, running or leased; worker heartbeats) is read
from the database at scrape time by ``WorkCollector``: it is the same on every machine,
so any web process answers it whole. Metric names start with ``evalsite_``.
"""

import os

from django.db import transaction
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily

RUNS_INGESTED = Counter("evalsite_runs_ingested", "Runs written by ingestion (API and OTLP).", ["project"])
SCORES_WRITTEN = Counter(
    "evalsite_scores_written", "Scores written by passes, gates and /score.", ["project", "source"]
)
ABSTENTIONS = Counter(
    "evalsite_abstentions", "Abstentions and skips recorded, by kind and reason.", ["project", "kind", "reason"]
)
QUOTA_REFUSALS = Counter(
    "evalsite_quota_refusals",
    "Records refused by the per-minute quota (runs answered 429, scores skipped).",
    ["project"],
)
JUDGE_CALLS = Counter(
    "evalsite_judge_calls", "Judge calls by outcome (scored, or the abstention's reason).", ["outcome"]
)
JUDGE_SECONDS = Histogram(
    "evalsite_judge_call_seconds",
    "Time of one judge call, from sending to its answer.",
    buckets=(0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300),
)
GATE_VERDICTS = Counter("evalsite_gate_verdicts", "Gate verdicts recorded.", ["project", "verdict"])


def counted_on_commit(counter, amount=1, **labels):
    """Add ``amount`` to ``counter`` once the current transaction commits (at once outside one)."""
    if amount:
        transaction.on_commit(lambda: counter.labels(**labels).inc(amount))


class WorkCollector:
    """Chunks of passes by state and worker heartbeats, read from the database per scrape."""

    def __init__(self, reader):
        # ``reader()`` returns ``(chunk_counts, heartbeats)``: kept out of this module so
        # the kernel does not import the scoring app (the web layer wires it).
        self.reader = reader

    def collect(self):
        chunk_counts, heartbeats = self.reader()
        chunks = GaugeMetricFamily(
            "evalsite_pass_chunks", "Chunks of unfinished passes by state (leased: running with a live lease).",
            labels=["state"],
        )  # fmt: skip
        for state, count in sorted(chunk_counts.items()):
            chunks.add_metric([state], count)
        yield chunks
        seen = GaugeMetricFamily(
            "evalsite_worker_heartbeat_age_seconds", "Seconds since each worker's last heartbeat.", labels=["worker"]
        )
        for hostname, age in sorted(heartbeats):
            seen.add_metric([hostname], age)
        yield seen


def metrics_text(reader):
    """The exposition text: this process's (or every process's) counters and the work's state."""
    registry = CollectorRegistry()
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.MultiProcessCollector(registry)
    else:
        for collector in (RUNS_INGESTED, SCORES_WRITTEN, ABSTENTIONS, QUOTA_REFUSALS, JUDGE_CALLS, JUDGE_SECONDS):
            registry.register(collector)
        registry.register(GATE_VERDICTS)
    registry.register(WorkCollector(reader))
    return generate_latest(registry)
