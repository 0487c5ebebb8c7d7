"""Benchmark: batched ingestion through the HTTP API, against the raw-write ceiling.

For each database (PostgreSQL, SQLite) this starts one gunicorn web process (one
worker with ``--threads`` threads, as ``manage.py serve`` runs it) on a fresh database,
POSTs N runs of 5 spans each to ``/v1/api/traces`` in batches from ``--clients``
connections at once, and reports runs/s and rows/s (a run is 6 rows: the run and its
spans). In the same run it measures the ceiling: the same bodies parsed
with orjson and the same rows written by the fastest raw path in one process
(psycopg ``COPY`` on PostgreSQL, ``executemany`` on SQLite), with no validation.

    .venv/bin/python bench/ingest.py [--runs 10000] [--batch 1000] [--db postgresql sqlite]
                                     [--threads 1] [--clients 1]

PostgreSQL is reached at ``BENCH_PG_URL`` (default postgresql://postgres@127.0.0.1:5432);
the database ``evalsite_bench`` is dropped and recreated.
"""

import argparse
import os
import platform
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.live import free_port  # noqa: E402

PG_SERVER = os.environ.get("BENCH_PG_URL", "postgresql://postgres@127.0.0.1:5432")
PG_DB = "evalsite_bench"
SPANS_PER_RUN = 5


def run_payloads(count, offset=0):
    start = datetime(2026, 11, 30, tzinfo=UTC)
    runs = []
    for i in range(offset, offset + count):
        t0 = start + timedelta(seconds=i)
        stamp = lambda ms: (t0 + timedelta(milliseconds=ms)).isoformat().replace("+00:00", "Z")  # noqa: E731, B023
        runs.append({
            "trace_id": f"bench-{i:08d}",
            "name": "reservo",
            "experiment": f"v{i % 4}",
            "input": f"How much is Focus pro for {i % 8 + 1} hours?",
            "output": f"Focus pro for {i % 8 + 1} hours is {(i % 8 + 1) * 25}.00 EUR.",
            "status": "ok",
            "started_at": stamp(0),
            "ended_at": stamp(1450),
            "cost_cents": 0.0481,
            "metadata": {"commit": "abc123", "branch": "main"},
            "tags": ["bench"],
            "spans": [
                {"span_id": "agent", "kind": "agent", "name": "reservo", "started_at": stamp(0), "ended_at": stamp(1450)},
                {"span_id": "llm-1", "parent_id": "agent", "kind": "llm", "name": "model", "model": "scripted",
                 "usage": {"input_tokens": 120, "output_tokens": 30}, "latency_ms": 400, "cost_cents": 0.02},
                {"span_id": "tool-1", "parent_id": "agent", "kind": "tool", "name": "quote_room",
                 "input": {"room": "Focus", "tier": "pro", "hours": i % 8 + 1},
                 "output": {"room": "Focus", "tier": "pro", "hours": i % 8 + 1, "total_cents": (i % 8 + 1) * 2500},
                 "latency_ms": 120},
                {"span_id": "llm-2", "parent_id": "agent", "kind": "llm", "name": "model", "model": "scripted",
                 "usage": {"input_tokens": 180, "output_tokens": 25}, "latency_ms": 400, "cost_cents": 0.0281},
                {"span_id": "tool-2", "parent_id": "agent", "kind": "other", "name": "format_answer",
                 "input": {"locale": "es"}, "output": {"ok": True}, "latency_ms": 5},
            ],
        })  # fmt: skip
    return runs


def bodies(total, batch):
    return [orjson.dumps({"traces": run_payloads(min(batch, total - i), i)}) for i in range(0, total, batch)]


# --- the API path -----------------------------------------------------------------


def manage(env, *args):
    result = subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True)
    if result.returncode:
        raise SystemExit(f"manage.py {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")
    return result.stdout


def fresh_environment(db, var_dir):
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update(EVALSITE_VAR_DIR=str(var_dir), DEBUG="0", LOG_LEVEL="WARNING", ALLOWED_HOSTS="127.0.0.1")
    if db == "postgresql":
        pg_recreate()
        env["DATABASE_URL"] = f"{PG_SERVER}/{PG_DB}"
    manage(env, "migrate", "--noinput", "-v0")
    key = manage(env, "create_project", "bench").strip().splitlines()[-1]
    return env, key


def pg_recreate():
    import psycopg

    with psycopg.connect(f"{PG_SERVER}/postgres", autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {PG_DB} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {PG_DB}")


def api_measure(db, payload_bodies, var_dir, *, threads=1, clients=1):
    env, key = fresh_environment(db, var_dir)
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "evalsite.wsgi", "--bind", f"127.0.0.1:{port}", "--workers", "1",
         "--threads", str(threads), "--worker-class", "gthread", "--timeout", "300", "--log-level", "warning"],
        cwd=ROOT, env=env,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}/v1/api/traces"
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1)
                break
            except OSError:
                time.sleep(0.1)
        headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
        # One small warm-up batch (connections, imports), not counted.
        post(url, headers, orjson.dumps({"traces": run_payloads(50, 10**7)}))
        started = time.perf_counter()
        with ThreadPoolExecutor(max_workers=clients) as pool:
            for status in pool.map(lambda body: post(url, headers, body), payload_bodies):
                if status != 201:
                    raise SystemExit(f"ingestion answered {status}")
        return time.perf_counter() - started
    finally:
        server.terminate()
        server.wait()


def post(url, headers, body):
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    with urllib.request.urlopen(request, timeout=300) as response:
        response.read()
        return response.status


# --- the ceiling: parse + raw write, no validation ----------------------------------

TRACE_COLUMNS = ("id", "project_id", "trace_id", "name", "input", "output", "status", "started_at", "ended_at",
                 "latency_ms", "cost_cents", "metadata", "tags", "source", "content_hash", "ingested_at")  # fmt: skip
SPAN_COLUMNS = ("trace_id", "span_id", "parent_span_id", "position", "kind", "name", "input", "output", "status",
                "latency_ms", "cost_cents", "model", "usage", "attributes")  # fmt: skip


def raw_rows(body, first_id, project_id, now):
    runs = orjson.loads(body)["traces"]
    traces, spans = [], []
    dumps = lambda v: None if v is None else orjson.dumps(v).decode()  # noqa: E731
    for offset, run in enumerate(runs):
        pk = first_id + offset
        traces.append((pk, project_id, run["trace_id"], run["name"], dumps(run["input"]), dumps(run["output"]),
                       run["status"], run["started_at"], run["ended_at"], 1450, run["cost_cents"],
                       dumps(run["metadata"]), dumps(run["tags"]), "api", "", now))  # fmt: skip
        for position, s in enumerate(run["spans"]):
            spans.append((pk, s["span_id"], s.get("parent_id"), position, s["kind"], s["name"], dumps(s.get("input")),
                          dumps(s.get("output")), "ok", s.get("latency_ms"), s.get("cost_cents"), s.get("model"),
                          dumps(s.get("usage")), "{}"))  # fmt: skip
    return traces, spans


def ceiling_measure(db, payload_bodies, var_dir):
    env, _ = fresh_environment(db, var_dir)
    now = datetime.now(UTC).isoformat()
    if db == "postgresql":
        import psycopg

        conn = psycopg.connect(env["DATABASE_URL"])
        project_id = conn.execute("SELECT id FROM evalsite_project").fetchone()[0]
        started = time.perf_counter()
        next_id = 1
        for body in payload_bodies:
            traces, spans = raw_rows(body, next_id, project_id, now)
            next_id += len(traces)
            with conn.cursor() as cur:
                with cur.copy(f"COPY datasets_trace ({', '.join(TRACE_COLUMNS)}) FROM STDIN") as copy:
                    for row in traces:
                        copy.write_row(row)
                with cur.copy(f"COPY datasets_span ({', '.join(SPAN_COLUMNS)}) FROM STDIN") as copy:
                    for row in spans:
                        copy.write_row(row)
            conn.commit()
        elapsed = time.perf_counter() - started
        conn.close()
        return elapsed
    conn = sqlite3.connect(var_dir / "evalsite.sqlite3")
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    project_id = conn.execute("SELECT id FROM evalsite_project").fetchone()[0]
    started = time.perf_counter()
    next_id = 1
    for body in payload_bodies:
        traces, spans = raw_rows(body, next_id, project_id, now)
        next_id += len(traces)
        conn.executemany(
            f"INSERT INTO datasets_trace ({', '.join(TRACE_COLUMNS)}) VALUES ({', '.join('?' * len(TRACE_COLUMNS))})",
            traces,
        )
        conn.executemany(
            f"INSERT INTO datasets_span ({', '.join(SPAN_COLUMNS)}) VALUES ({', '.join('?' * len(SPAN_COLUMNS))})",
            spans,
        )
        conn.commit()
    elapsed = time.perf_counter() - started
    conn.close()
    return elapsed


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--db", nargs="+", default=["postgresql", "sqlite"], choices=["postgresql", "sqlite"])
    parser.add_argument("--threads", type=int, default=1, help="threads of the one web process")
    parser.add_argument("--clients", type=int, default=1, help="batches in flight at once")
    args = parser.parse_args()
    payload_bodies = bodies(args.runs, args.batch)
    rows = args.runs * (1 + SPANS_PER_RUN)
    mb = sum(map(len, payload_bodies)) / 1e6
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print(
        f"workload: {args.runs} runs x {SPANS_PER_RUN} spans = {rows} rows, batches of {args.batch}, {mb:.1f} MB of JSON"
    )
    print(f"one web process: {args.threads} thread(s), {args.clients} batch(es) in flight")
    print(f"{'database':<11} {'path':<30} {'seconds':>8} {'runs/s':>9} {'rows/s':>10}")
    for db in args.db:
        with tempfile.TemporaryDirectory() as api_dir, tempfile.TemporaryDirectory() as raw_dir:
            api_seconds = api_measure(db, payload_bodies, Path(api_dir), threads=args.threads, clients=args.clients)
            raw_seconds = ceiling_measure(db, payload_bodies, Path(raw_dir))
        for label, seconds in (("HTTP API, 1 web process", api_seconds), ("ceiling: parse + raw write", raw_seconds)):
            print(f"{db:<11} {label:<30} {seconds:8.2f} {args.runs / seconds:9.0f} {rows / seconds:10.0f}")
        print(f"{db:<11} {'API / ceiling':<30} {raw_seconds / api_seconds:8.0%}")


if __name__ == "__main__":
    main()
