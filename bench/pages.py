"""Benchmark: the reviewer's pages over 55,000 runs, each timed through Django's test client.

    .venv/bin/python bench/pages.py [--runs 55000] [--repeat 5]

Runs on PostgreSQL (``BENCH_PG_URL``, default postgresql://postgres@127.0.0.1:5432; the
database ``BENCH_PAGES_DB``, default ``evalsite_bench_pages``, is dropped and recreated).
The data: a dataset of 1,000 cases, experiments of 5,000 runs each (five trials a case,
one tool call a run, every seventh trial of the last experiment calling the wrong tool)
up to ``--runs``, and a gate run of each of the last two (five trials a case: their
scores are written), so the gate page has 1,000 cases with trials, flaky ones among
them, and the compare page pairs 1,000 cases. Each page is loaded ``--repeat`` times
after one warm-up; the median and the slowest are printed (rendering included).
"""

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
PG_SERVER = os.environ.get("BENCH_PG_URL", "postgresql://postgres@127.0.0.1:5432")
PG_DB = os.environ.get("BENCH_PAGES_DB", "evalsite_bench_pages")
CASES, TRIALS = 1000, 5


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


def experiment_ingest(project, experiment, *, wrong_every=0):
    from datasets.ingestion import traces_ingest

    runs = [(case, trial) for case in range(CASES) for trial in range(1, TRIALS + 1)]
    for start in range(0, len(runs), 1000):
        batch = []
        for i, (case, trial) in enumerate(runs[start : start + 1000], start=start):
            tool = "book_room" if wrong_every and i % wrong_every == 0 else "quote_room"
            batch.append({
                "trace_id": f"{experiment}-{case}-{trial}", "experiment": experiment, "dataset": "desk",
                "case": f"case_{case:04d}", "trial": trial, "input": f"q{case}", "output": "75 EUR",
                "started_at": f"2026-11-30T10:{trial:02d}:00Z", "latency_ms": 900 + i % 500, "cost_cents": 0.05,
                "spans": [
                    {"span_id": "llm-1", "kind": "llm", "name": "model", "latency_ms": 400,
                     "started_at": f"2026-11-30T10:{trial:02d}:00Z"},
                    {"span_id": "tool-1", "parent_id": "llm-1", "kind": "tool", "name": tool,
                     "input": {"room": "Focus"}, "output": {"room": "Focus", "total_cents": 7500}, "latency_ms": 120,
                     "started_at": f"2026-11-30T10:{trial:02d}:00.500Z"},
                ],
            })  # fmt: skip
        traces_ingest(project=project, payload={"traces": batch})


def data_build(total_runs):
    from datasets.experiments import experiment_get
    from datasets.models import Dataset, GoldenCase
    from gating.evaluation import gate_evaluate
    from gating.models import GatePolicy, GateRun
    from tests.base import actors_create

    actors = actors_create()
    dataset = Dataset.objects.create(project=actors.acme, name="desk")
    GatePolicy.objects.create(dataset=dataset, trials=TRIALS, trial_pass_ratio=0.8)
    GoldenCase.objects.bulk_create(
        GoldenCase(dataset=dataset, name=f"case_{i:04d}", expectations={"expected_tools": ["quote_room"]})
        for i in range(CASES)
    )
    names = [f"e{n:02d}" for n in range(1, total_runs // (CASES * TRIALS) + 1)]
    started = time.perf_counter()
    for name in names:
        experiment_ingest(actors.acme, name, wrong_every=7 if name == names[-1] else 0)
    print(f"ingested {len(names) * CASES * TRIALS} runs in {time.perf_counter() - started:.1f} s")
    gate_runs = []
    for name in names[-2:]:
        started = time.perf_counter()
        # Evaluated here, as a worker would (a gate of 1,000 cases is handed to the workers).
        gate_run = GateRun.objects.create(
            project=actors.acme, dataset=dataset, experiment=experiment_get(project=actors.acme, name=name)
        )
        gate_runs.append(gate_evaluate(gate_run_id=gate_run.pk))
        print(f"gate of {name}: {gate_runs[-1].verdict} in {time.perf_counter() - started:.1f} s")
    return actors, names, gate_runs


def pages_time(actors, names, gate_runs, repeat):
    from django.test import Client

    from tests.base import PASSWORD

    client = Client()
    assert client.login(username=actors.bob.username, password=PASSWORD)
    base, candidate = names[-2], names[-1]
    pages = {
        "runs list": "/p/acme/runs/",
        "runs list, failed any": "/p/acme/runs/?failed=any",
        "runs list, by latency": "/p/acme/runs/?sort=latency",
        "runs list, most failures": "/p/acme/runs/?sort=failures",
        "runs list, by cost, page 50": "/p/acme/runs/?sort=cost&page=50",
        "run": f"/p/acme/runs/{candidate}-0-1/",
        "experiments": "/p/acme/experiments/",
        "gate runs": "/p/acme/gate-runs/",
        "gate run (failing)": f"/p/acme/gate-runs/{gate_runs[-1].pk}/",
        "gate run (all, page 10)": f"/p/acme/gate-runs/{gate_runs[-1].pk}/?show=all&page=10",
        "compare (changed)": f"/p/acme/experiments/compare/?base={base}&candidate={candidate}",
        "compare (all)": f"/p/acme/experiments/compare/?base={base}&candidate={candidate}&show=all",
    }
    print(f"{'page':32} {'median ms':>10} {'max ms':>8}")
    for name, path in pages.items():
        assert client.get(path).status_code == 200, path
        times = []
        for _ in range(repeat):
            started = time.perf_counter()
            response = client.get(path)
            times.append((time.perf_counter() - started) * 1000)
            assert response.status_code == 200, path
        print(f"{name:32} {statistics.median(times):10.0f} {max(times):8.0f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=55_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    database_recreate()
    django_setup()
    actors, names, gate_runs = data_build(args.runs)
    pages_time(actors, names, gate_runs, args.repeat)


if __name__ == "__main__":
    main()
