"""Benchmark: a scoring pass end to end on one worker, against the same scorers in memory.

For each size (10,000 and 100,000 runs of 5 spans by default) this recreates a
PostgreSQL database, stores the runs (linked to 8 golden cases whose expectations
configure the agent checks), then:

1. ceiling: loads every run into memory (not timed) and times the 16 scorers over
   them with the pass's own engine (config resolved per run, the case winning), with
   nothing read or written: the most a pass could do on this machine;
2. end to end: starts one Celery worker (``--pool solo``: one process, one core) on
   Redis, asks for a pass of the 13 built-ins and the 3 agent checks over all the
   runs, and times it from the request to ``done``: planning, the broker, loading,
   scoring, writing scores and abstentions through ``COPY``, and progress. The
   worker's peak memory (VmHWM) is read when the pass is done;
3. re-run: the same pass again, which finds every score stored and writes nothing.

    .venv/bin/python bench/score.py [--runs 10000 100000] [--chunk 1000]

PostgreSQL is reached at ``BENCH_PG_URL`` (default postgresql://postgres@127.0.0.1:5432;
the database ``evalsite_bench_score`` is dropped and recreated), Redis at
``BENCH_REDIS_URL`` (default redis://127.0.0.1:6379/13). Results go in BENCHMARKS.md.
"""

import argparse
import os
import platform
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PG_SERVER = os.environ.get("BENCH_PG_URL", "postgresql://postgres@127.0.0.1:5432")
PG_DB = "evalsite_bench_score"
REDIS = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/13")
VAR_DIR = Path(tempfile.mkdtemp(prefix="evalsite-bench-score-"))
os.environ.update(
    DJANGO_SETTINGS_MODULE="evalsite.settings",
    DATABASE_URL=f"{PG_SERVER}/{PG_DB}",
    REDIS_URL=REDIS,
    EVALSITE_VAR_DIR=str(VAR_DIR),
    LOG_LEVEL="WARNING",
    DEBUG="0",
)

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection, connections  # noqa: E402

from bench.ingest import run_payloads  # noqa: E402
from bench.reference_report import worker_start  # noqa: E402
from checks.scorers import AGENT_CHECK_IDS, BUILTIN_IDS  # noqa: E402
from datasets.ingestion import traces_ingest  # noqa: E402
from datasets.models import Dataset, GoldenCase  # noqa: E402
from evalsite.projects import project_create  # noqa: E402
from scoring.models import PassStatus, Score, ScoringPass  # noqa: E402
from scoring.passes.services import pass_start  # noqa: E402
from scoring.pipeline.engine import ScoringPlan, outcomes_compute  # noqa: E402
from scoring.pipeline.loading import runs_load  # noqa: E402
from scoring.selection.catalog import catalog_for  # noqa: E402

SCORERS = [*BUILTIN_IDS, *AGENT_CHECK_IDS]
# The request's config; runs linked to a case take the case's instead where it has one.
CONFIG = {
    "exact_match": {"expected": "Focus pro for 3 hours is 75.00 EUR."},
    "contains": {"value": "EUR"},
    "latency_budget": {"ms": 2000},
    "cost_budget": {"cents": 0.05},
    "tool_efficiency": {"max_calls": 3},
    "span_present": {"kind": "tool", "name": "quote_room"},
    "tool_succeeded": {"tool": "quote_room"},
    "tool_choice": {"expected_tools": ["quote_room"]},
}
QUOTE_SCHEMA = {
    "type": "object",
    "required": ["room", "tier", "hours", "total_cents"],
    "properties": {
        "room": {"type": "string"},
        "tier": {"enum": ["basic", "pro"]},
        "hours": {"type": "integer", "minimum": 1},
        "total_cents": {"type": "integer", "minimum": 0},
    },
}


def database_recreate():
    import psycopg

    connections.close_all()
    with psycopg.connect(f"{PG_SERVER}/postgres", autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {PG_DB} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {PG_DB}")
    call_command("migrate", verbosity=0)


def data_create(runs):
    project = project_create(slug="bench")
    dataset = Dataset.objects.create(project=project, name="reservo")
    for hours in range(1, 9):
        GoldenCase.objects.create(
            dataset=dataset,
            name=f"quote_focus_pro_{hours}h",
            expected_output=f"Focus pro for {hours} hours is {hours * 25}.00 EUR.",
            expectations={
                "expected_tools": ["quote_room"],
                "tool_output": {"room": "Focus", "total_cents": hours * 2500},
                "tool_output_schema": QUOTE_SCHEMA,
                "latency_threshold_ms": 2000,
                "cost_threshold_cents": 0.05,
                "contains": "EUR",
            },
        )
    for start in range(0, runs, 1000):
        batch = run_payloads(min(1000, runs - start), start)
        for run in batch:
            run.update(dataset="reservo", case=f"quote_focus_pro_{int(run['input'].split()[-2])}h")
        traces_ingest(project=project, payload={"traces": batch})
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    return project


def ceiling_measure(project, chunk):
    """Scores per second of the pass's engine over runs already in memory."""
    from datasets.models import Trace

    pks = list(Trace.objects.filter(project=project).order_by("-started_at", "-id").values_list("pk", flat=True))
    runs = []
    for start in range(0, len(pks), chunk):
        runs.extend(runs_load(pks[start : start + chunk]))
    available = catalog_for(project).scorers
    plan = ScoringPlan([available[s] for s in SCORERS], CONFIG)
    started = time.perf_counter()
    outcomes, _ = outcomes_compute(plan, runs)
    elapsed = time.perf_counter() - started
    count = len(outcomes)
    del runs, outcomes
    return count, elapsed


def memory_kib(pid, field):
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def cpu_seconds(pid):
    """User + system CPU time of a process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def database_backends_cpu(seen):
    """Record the CPU time of every PostgreSQL backend serving the bench database.

    The worker keeps its connections (one for loading, one for its writer thread), so
    a reading at the start, once a second and at the end sees all of them; a backend
    that went away keeps its last reading in ``seen`` (pid -> seconds).
    """
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            title = (entry / "cmdline").read_bytes()
            if not title.startswith(b"postgres: ") or f" {PG_DB} ".encode() not in title:
                continue
            seen[int(entry.name)] = cpu_seconds(int(entry.name))
        except OSError:
            continue


def pass_measure(project, queue, runs, chunk):
    database_cpu = {}
    database_backends_cpu(database_cpu)
    before = dict(database_cpu)
    started = sampled = time.perf_counter()
    scoring_pass = pass_start(
        project=project, data={"scorers": SCORERS, "config": CONFIG, "limit": runs}, chunk_runs=chunk, queue=queue
    )
    while True:
        status = ScoringPass.objects.filter(pk=scoring_pass.pk).values_list("status", flat=True).get()
        if status in (PassStatus.DONE, PassStatus.FAILED):
            break
        if time.perf_counter() - sampled >= 1:
            database_backends_cpu(database_cpu)
            sampled = time.perf_counter()
        time.sleep(0.02)
    elapsed = time.perf_counter() - started
    database_backends_cpu(database_cpu)
    scoring_pass.refresh_from_db()
    if scoring_pass.status != PassStatus.DONE:
        raise SystemExit(f"the pass failed: {scoring_pass.error}")
    scoring_pass.database_cpu = sum(database_cpu.values()) - sum(before.values())
    return scoring_pass, elapsed


def size_measure(runs, chunk):
    database_recreate()
    t = time.perf_counter()
    project = data_create(runs)
    setup = time.perf_counter() - t
    ceiling_scores, ceiling_seconds = ceiling_measure(project, chunk)
    queue = f"bench-{uuid.uuid4().hex[:8]}"
    with open(VAR_DIR / f"worker-{runs}.log", "w") as log:
        worker = worker_start(queue, log)
        try:
            baseline = memory_kib(worker.pid, "VmRSS")
            cpu_before = cpu_seconds(worker.pid)
            first, first_seconds = pass_measure(project, queue, runs, chunk)
            worker_cpu = cpu_seconds(worker.pid) - cpu_before
            peak = memory_kib(worker.pid, "VmHWM")
            second, second_seconds = pass_measure(project, queue, runs, chunk)
        finally:
            worker.terminate()
            worker.wait()
    stored = Score.objects.count()
    assert stored == first.written, (stored, first.written)
    outcomes = first.written + first.skipped
    return {
        "runs": runs,
        "setup_seconds": setup,
        "ceiling_rate": ceiling_scores / ceiling_seconds,
        "ceiling_seconds": ceiling_seconds,
        "outcomes": outcomes,
        "written": first.written,
        "skipped": first.skipped,
        "seconds": first_seconds,
        "rate": outcomes / first_seconds,
        "worker_cpu": worker_cpu,
        "database_cpu": first.database_cpu,
        "baseline_mib": baseline / 1024,
        "peak_mib": peak / 1024,
        "rerun_seconds": second_seconds,
        "rerun_rate": (second.existing + second.skipped) / second_seconds,
        "rerun_written": second.written,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--chunk", type=int, default=1000, help="runs per chunk (EVALSITE_PASS_CHUNK_RUNS)")
    args = parser.parse_args()
    import psycopg

    with psycopg.connect(f"{PG_SERVER}/postgres") as conn:
        pg_version = conn.execute("SELECT version()").fetchone()[0].split(" on ")[0]
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, {pg_version}")
    print(f"workload: {len(SCORERS)} scorers x runs of 5 spans, chunks of {args.chunk} runs, one worker (solo pool)")
    results = [size_measure(runs, args.chunk) for runs in args.runs]
    print()
    print(
        "| runs | scores (written + abstained) | end to end | scores/s end to end | worker CPU | PostgreSQL CPU | "
        "in-memory ceiling scores/s | end to end / ceiling | worker memory at start → peak | re-run (writes nothing) |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in results:
        print(
            f"| {r['runs']:,} | {r['outcomes']:,} ({r['written']:,} + {r['skipped']:,}) | {r['seconds']:.2f} s "
            f"| {r['rate']:,.0f} | {r['worker_cpu']:.1f} s | {r['database_cpu']:.1f} s | {r['ceiling_rate']:,.0f} | {r['rate'] / r['ceiling_rate']:.0%} "
            f"| {r['baseline_mib']:.0f} → {r['peak_mib']:.0f} MiB | {r['rerun_seconds']:.2f} s ({r['rerun_rate']:,.0f}/s) |"
        )


if __name__ == "__main__":
    main()
