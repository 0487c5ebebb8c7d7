"""Benchmark: gate latency for 50 and 10,000 cases, and a comparison over a million scores.

    .venv/bin/python bench/gate.py [--cases 50 10000] [--scores 1000000]

Runs on PostgreSQL (``BENCH_PG_URL``, default postgresql://postgres@127.0.0.1:5432; the
database ``evalsite_bench_gate`` is dropped and recreated). For each size: a dataset of
N Reservo-like cases (tool choice, result schema, result values, cost and latency
thresholds: 5 checks a case), one run per case in an experiment, then the gate service
timed cold (every score computed and written) and warm (every score reused). Then, with
``--http``, the same gate through HTTP on a gunicorn server (one process, one thread):
``POST /v1/api/gate`` evaluated in the request (every score present; the server's
``EVALSITE_GATE_SYNC_MAX_CASES`` raised so it does not go to a worker), the answer's
size, ``GET /v1/api/gate-runs/{id}``, and every page of its cases followed from
``cases_next`` (when the answer has one). Then two experiments with half a million
scores each, and ``experiments_compare`` timed over them (``--scores 0`` skips it).
"""

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
PG_SERVER = os.environ.get("BENCH_PG_URL", "postgresql://postgres@127.0.0.1:5432")
PG_DB = os.environ.get("BENCH_GATE_DB", "evalsite_bench_gate")


def database_recreate():
    import psycopg

    with psycopg.connect(f"{PG_SERVER}/postgres", autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {PG_DB} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {PG_DB}")


def django_setup():
    os.environ["DATABASE_URL"] = f"{PG_SERVER}/{PG_DB}"
    os.environ.pop("REDIS_URL", None)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalsite.settings")
    os.environ["LOG_LEVEL"] = "WARNING"
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


SCHEMA = {
    "type": "object",
    "required": ["room", "total_cents"],
    "properties": {"room": {"type": "string"}, "total_cents": {"type": "integer"}},
    "additionalProperties": False,
}


def dataset_build(project, name, count):
    from datasets.models import Dataset, GoldenCase

    dataset = Dataset.objects.create(project=project, name=name)
    expectations = {
        "expected_tools": ["quote_room"],
        "tool_output": {"total_cents": 7500},
        "tool_output_schema": SCHEMA,
        "cost_threshold_cents": 1.0,
        "latency_threshold_ms": 2000,
    }
    GoldenCase.objects.bulk_create(
        [
            GoldenCase(dataset=dataset, name=f"case_{i:05d}", input=f"q{i}", expectations=expectations)
            for i in range(count)
        ],
        batch_size=2000,
    )
    return dataset


def runs_ingest(project, dataset, experiment, count, *, failing_every=0):
    from datasets.ingestion import traces_ingest

    for start in range(0, count, 1000):
        batch = []
        for i in range(start, min(start + 1000, count)):
            total = 6000 if failing_every and i % failing_every == 0 else 7500
            batch.append({
                "trace_id": f"{experiment}-{i}", "experiment": experiment, "dataset": dataset.name, "case": f"case_{i:05d}",
                "input": f"q{i}", "output": "75 EUR", "started_at": "2026-11-30T10:00:00Z", "latency_ms": 900,
                "cost_cents": 0.05,
                "spans": [
                    {"span_id": "llm-1", "kind": "llm", "name": "model", "latency_ms": 400},
                    {"span_id": "tool-1", "parent_id": "llm-1", "kind": "tool", "name": "quote_room",
                     "input": {"room": "Focus"}, "output": {"room": "Focus", "total_cents": total}, "latency_ms": 120},
                ],
            })  # fmt: skip
        traces_ingest(project=project, payload={"traces": batch})


def gate_time(project, dataset, experiment):
    from datasets.experiments import experiment_get
    from gating.evaluation import gate_evaluate
    from gating.models import GateRun

    gate_run = GateRun.objects.create(
        project=project, dataset=dataset, experiment=experiment_get(project=project, name=experiment)
    )
    started = time.perf_counter()
    gate_run = gate_evaluate(gate_run_id=gate_run.pk)
    return time.perf_counter() - started, gate_run


def http_measure(project, dataset, experiment, reps):
    """The gate through HTTP (see the module docstring): ``{post_s: [...], answer_bytes, get_s, get_bytes,
    pages, pages_s, pages_bytes, cases_listed}``."""
    import json
    import urllib.request

    from evalsite.projects import api_key_create
    from evalsite.scopes import ADMIN
    from tests.live import web_server

    _, key = api_key_create(project=project, name=f"bench-http-{time.time_ns()}", scopes=[ADMIN])
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}

    def call(url, body=None):
        started = time.perf_counter()
        request = urllib.request.Request(url, data=body and json.dumps(body).encode(), headers=headers)
        with urllib.request.urlopen(request, timeout=300) as response:
            raw = response.read()
        return time.perf_counter() - started, raw

    env = {"EVALSITE_GATE_SYNC_MAX_CASES": "1000000", "EVALSITE_DEBUG": "0", "LOG_LEVEL": "WARNING"}
    with web_server(workers=1, threads=1, env=env) as url:
        call(f"{url}/v1/api/gate-runs")  # the process's first request (imports, connection)
        posts = [call(f"{url}/v1/api/gate", {"dataset": dataset.name, "experiment": experiment}) for _ in range(reps)]
        answer = json.loads(posts[-1][1])
        got_s, got = call(f"{url}/v1/api/gate-runs/{answer['gate_run_id']}")
        link, pages, pages_s, pages_bytes, listed = answer.get("cases_next"), 0, 0.0, 0, len(answer["cases"])
        while link:
            seconds, raw = call(link)
            page = json.loads(raw)
            pages, pages_s, pages_bytes, listed = (
                pages + 1,
                pages_s + seconds,
                pages_bytes + len(raw),
                listed + len(page["results"]),
            )
            link = page["next"]
    return {
        "post_s": [round(s, 3) for s, _ in posts], "answer_bytes": len(posts[-1][1]), "get_s": got_s,
        "get_bytes": len(got), "pages": pages, "pages_s": pages_s, "pages_bytes": pages_bytes,
        "cases_listed": listed, "verdict": answer["verdict"], "total_cases": answer["total_cases"],
    }  # fmt: skip


def scores_bulk(project, experiment_name, runs, scorers, pass_share):
    """Runs of an experiment with one score per scorer each, written with COPY."""
    from django.db import transaction
    from django.utils import timezone

    from datasets.models import Experiment, Trace
    from evalsite.bulk import ids_allocate, rows_insert
    from scoring.score_configs import score_configs_store

    experiment = Experiment.objects.create(project=project, name=experiment_name)
    now = timezone.now()
    threshold = int(pass_share * 1000)
    with transaction.atomic():
        score_configs_store(project_id=project.pk, configs={"h": "{}"})
        ids = ids_allocate(Trace, runs)
        rows_insert(
            Trace._meta.db_table,
            ("id", "project_id", "trace_id", "name", "status", "started_at", "metadata", "tags", "source",
             "content_hash", "ingested_at", "experiment_id"),
            [(pk, project.pk, f"{experiment_name}-{pk}", "bench", "ok", now, "{}", "[]", "api", "", now, experiment.pk)
             for pk in ids],
        )  # fmt: skip
        rows_insert(
            "scoring_score",
            ("project_id", "trace_id", "scorer", "scorer_version", "config_hash", "value", "passed", "reason",
             "detail", "source", "experiment_id", "run_revision", "created_at"),
            [(project.pk, pk, scorer, "1", "h", float(ok), ok, "", "{}", "builtin", experiment.pk, 1, now)
             for pk in ids
             for n, scorer in enumerate(scorers)
             for ok in [(pk * 7 + n) % 1000 < threshold]],
        )  # fmt: skip
    return experiment


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="+", type=int, default=[50, 10_000])
    parser.add_argument("--scores", type=int, default=1_000_000)
    parser.add_argument("--http", action="store_true", help="also time the gate through HTTP (a gunicorn server)")
    parser.add_argument("--http-reps", type=int, default=3)
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()}")
    database_recreate()
    django_setup()
    from django.db import connection

    from evalsite.projects import project_create
    from gating.comparison import experiments_compare
    from scoring.models import Score

    project = project_create(slug="bench", name="bench")
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, PostgreSQL {connection.pg_version // 10000}"
    )
    print(f"{'cases':>7} {'gate cold (s)':>14} {'gate warm (s)':>14} {'scores written':>15} {'verdict':>8}")
    for count in args.cases:
        dataset = dataset_build(project, f"bench-{count}", count)
        runs_ingest(project, dataset, f"cand-{count}", count, failing_every=100)
        before = Score.objects.count()
        cold, gate_run = gate_time(project, dataset, f"cand-{count}")
        written = Score.objects.count() - before
        warm, _ = gate_time(project, dataset, f"cand-{count}")
        print(
            f"{count:>7} {cold:>14.2f} {warm:>14.2f} {written:>15} {gate_run.verdict:>5} {gate_run.passed_cases}/{gate_run.total_cases}"
        )
        if args.http:
            http = http_measure(project, dataset, f"cand-{count}", args.http_reps)
            print(f"{count:>7} through HTTP: {http}")

    if not args.scores:
        print(f"load average after: {os.getloadavg()}")
        return
    scorers = [f"scorer_{i:02d}" for i in range(16)]
    runs_per_side = args.scores // 2 // len(scorers)
    base = scores_bulk(project, "base", runs_per_side, scorers, 0.9)
    candidate = scores_bulk(project, "candidate", runs_per_side, scorers, 0.85)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    total = Score.objects.filter(experiment__in=[base, candidate]).count()
    timings = []
    for _ in range(5):
        started = time.perf_counter()
        result = experiments_compare(base=base, candidate=candidate)
        timings.append(time.perf_counter() - started)
    row = result["scorers"][0]
    print(f"compare: {total} scores ({len(scorers)} scorers x {runs_per_side} runs x 2 experiments): "
          f"median {statistics.median(timings):.3f} s over 5 (min {min(timings):.3f}, max {max(timings):.3f}); "
          f"{row['scorer']}: base {row['base']['mean']:.3f} n={row['base']['n']}, "
          f"candidate {row['candidate']['mean']:.3f} n={row['candidate']['n']}, regressed={row['regressed']}")  # fmt: skip


if __name__ == "__main__":
    main()
