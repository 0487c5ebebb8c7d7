"""Benchmark: the same pass run by one worker, then two, then one again (the drift check).

Recreates a PostgreSQL database, stores N runs (the ingestion benchmark's runs, linked
to 8 golden cases), and times a pass of the 16 built-in scorers and agent checks from
the request to ``done`` with 1 and 2 Celery worker processes (``--pool solo`` each, as
separate machines would run them) on Redis. Between measurements the scores and
abstentions are deleted, so every pass writes the same rows.

    .venv/bin/python bench/scale.py [--runs 20000] [--chunk 500]

``BENCH_PG_URL`` (server, default postgresql://postgres@127.0.0.1:5432) and
``BENCH_PG_DB`` (dropped and recreated, default evalsite_bench_scale); Redis at
``BENCH_REDIS_URL`` (default redis://127.0.0.1:6379/13). Results go in BENCHMARKS.md.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PG_SERVER = os.environ.get("BENCH_PG_URL", "postgresql://postgres@127.0.0.1:5432")
PG_DB = os.environ.get("BENCH_PG_DB", "evalsite_bench_scale")
REDIS = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/13")
VAR_DIR = Path(tempfile.mkdtemp(prefix="evalsite-bench-scale-"))
os.environ.update(
    DJANGO_SETTINGS_MODULE="evalsite.settings", DATABASE_URL=f"{PG_SERVER}/{PG_DB}", REDIS_URL=REDIS,
    EVALSITE_VAR_DIR=str(VAR_DIR), LOG_LEVEL="WARNING", DEBUG="0",
)  # fmt: skip

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection, connections  # noqa: E402

from bench.ingest import run_payloads  # noqa: E402
from checks.scorers import AGENT_CHECK_IDS, BUILTIN_IDS  # noqa: E402
from datasets.ingestion import traces_ingest  # noqa: E402
from datasets.models import Dataset, GoldenCase  # noqa: E402
from evalsite.models import Heartbeat  # noqa: E402
from evalsite.projects import project_create  # noqa: E402
from evalsite.tasks import heartbeat  # noqa: E402
from scoring.models import Abstention, PassStatus, Score, ScoringChunk, ScoringPass  # noqa: E402
from scoring.passes.services import pass_start  # noqa: E402

SCORERS = [*BUILTIN_IDS, *AGENT_CHECK_IDS]
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
            dataset=dataset, name=f"quote_focus_pro_{hours}h",
            expectations={"expected_tools": ["quote_room"], "tool_output": {"room": "Focus", "total_cents": hours * 2500}},
        )  # fmt: skip
    for start in range(0, runs, 1000):
        batch = run_payloads(min(1000, runs - start), start)
        for run in batch:
            run.update(dataset="reservo", case=f"quote_focus_pro_{int(run['input'].split()[-2])}h")
        traces_ingest(project=project, payload={"traces": batch})
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    return project


def workers_start(queue, count):
    processes = []
    for i in range(count):
        log = open(VAR_DIR / f"worker-{queue}-{i}.log", "w")  # noqa: SIM115 - the child owns it
        processes.append(subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "evalsite", "worker", "--pool", "solo", "--queues", queue,
             "--loglevel", "WARNING", "--without-gossip", "--without-mingle", "--without-heartbeat",
             "--hostname", f"{queue}-{i}@%h"],
            cwd=ROOT, env=dict(os.environ), stdout=log, stderr=subprocess.STDOUT,
        ))  # fmt: skip
    deadline = time.monotonic() + 120
    while Heartbeat.objects.filter(hostname__startswith=queue).count() < count:
        heartbeat.apply_async(queue=queue)
        if time.monotonic() > deadline:
            raise SystemExit(f"the workers did not start; see {VAR_DIR}")
        time.sleep(0.5)
    return processes


def pass_time(project, workers, runs, chunk):
    Score.objects.all().delete()
    Abstention.objects.all().delete()
    queue = f"bench-{uuid.uuid4().hex[:8]}"
    processes = workers_start(queue, workers)
    try:
        started = time.perf_counter()
        scoring_pass = pass_start(
            project=project, data={"scorers": SCORERS, "config": CONFIG, "limit": runs}, chunk_runs=chunk, queue=queue
        )
        while ScoringPass.objects.filter(pk=scoring_pass.pk).values_list("status", flat=True).get() not in (
            PassStatus.DONE, PassStatus.FAILED,
        ):  # fmt: skip
            time.sleep(0.02)
        elapsed = time.perf_counter() - started
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            process.wait()
    scoring_pass.refresh_from_db()
    takers = ScoringChunk.objects.filter(scoring_pass=scoring_pass).values_list("claimed_by", flat=True)
    return elapsed, scoring_pass.written + scoring_pass.skipped, len(set(takers))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20_000)
    parser.add_argument("--chunk", type=int, default=500)
    args = parser.parse_args()
    database_recreate()
    project = data_create(args.runs)
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    results = []
    for workers in (1, 2, 1):
        seconds, outcomes, takers = pass_time(project, workers, args.runs, args.chunk)
        results.append(seconds)
        print(f"{workers} worker(s): {seconds:.2f} s, {outcomes / seconds:,.0f} outcomes/s, chunks taken by {takers}")
    one = (results[0] + results[2]) / 2
    print(f"speed-up with two workers: {one / results[1]:.2f}x (one worker: mean of before and after)")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
