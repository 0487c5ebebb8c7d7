"""Benchmark: an online rule keeping up with sustained ingestion through the HTTP API.

On a fresh PostgreSQL database with the reference workload's golden cases
(``bench/reference_data.py``), this starts one gunicorn web process (one worker, one
thread, as ``bench/ingest.py`` measures it) and one Celery worker, makes one online rule
of the ten reference checks at a 10% sample, then POSTs the workload's runs (renamed
each round, so every run is new) in batches of 1,000 from one client, as fast as the web
process takes them, for ``--minutes``. Every ``--sample-seconds`` it reads the backlog:
runs the rule's sample takes (the same hash as the rule) that have arrived but are not
scored yet, and how many runs the rule has not looked at. After the ingestion stops it
waits for the backlog to drain (``--drain-seconds`` at most) and reports the lag from a
run's arrival (``ingested_at``) to its first score, p50 and p95, over every sampled run.

    .venv/bin/python bench/online.py [--minutes 10] [--quick] [--pool solo|deployed] [--in-process]

``--quick`` is a two-minute run. ``--in-process`` sends the runs with ``traces_ingest``
in the benchmark's process instead of HTTP (the web process still runs, idle): on a
small machine the web process and the worker share the cores, and this sends runs at
about the rate ``bench/ingest.py`` measures for a web process alone. PostgreSQL: ``BENCH_PG_URL`` (default
postgresql://postgres@127.0.0.1:5432; the database ``evalsite_bench_online`` is dropped
and recreated); Redis: ``BENCH_REDIS_URL`` (default redis://127.0.0.1:6379/12).
"""

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
PG_SERVER = os.environ.get("BENCH_PG_URL", "postgresql://postgres@127.0.0.1:5432")
PG_DB = "evalsite_bench_online"
VAR_DIR = Path(tempfile.mkdtemp(prefix="evalsite-bench-online-"))
os.environ.update(
    DJANGO_SETTINGS_MODULE="evalsite.settings",
    DATABASE_URL=f"{PG_SERVER}/{PG_DB}",
    REDIS_URL=os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/12"),
    EVALSITE_VAR_DIR=str(VAR_DIR),
    LOG_LEVEL="WARNING",
    DEBUG="0",
    ALLOWED_HOSTS="127.0.0.1",
)

import django  # noqa: E402

django.setup()

from django.db import connection  # noqa: E402

from bench import reference_data as data  # noqa: E402
from bench.reference_report import worker_start  # noqa: E402
from tests.live import free_port  # noqa: E402

DATASET = "reference"
SAMPLE_RATE = 0.1
BATCH = 1000


def database_recreate():
    import psycopg
    from django.core.management import call_command
    from django.db import connections

    connections.close_all()
    with psycopg.connect(f"{PG_SERVER}/postgres", autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {PG_DB} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {PG_DB}")
    call_command("migrate", verbosity=0)


def production_run(trace, prefix):
    """The workload's run as production sends it: of no experiment, linked to its case."""
    run = data.run_payload(trace, DATASET, None, prefix)
    del run["experiment"]
    return run


def setup(workloads):
    """The project, its key, the golden cases and the rule; returns ``(key, rule, traces)``."""
    from datasets.ingestion import traces_ingest
    from evalsite.projects import api_key_create, project_create
    from online.rules import rule_create

    gen_traces = data.workload(workloads)
    traces_path = VAR_DIR / "traces.jsonl"
    subprocess.run([sys.executable, str(workloads / "gen_traces.py"), "10000", str(traces_path)], check=True)
    traces = data.traces_read(traces_path)
    project = project_create(slug="bench", name="bench")
    _, key = api_key_create(project=project, name="bench", scopes=["ingest"])
    data.cases_create(project, DATASET, traces)
    # A batch before the rule, as production had: the rule names checks its runs' cases configure.
    warm = {"traces": [production_run(t, "warm-") for t in traces[:BATCH]]}
    traces_ingest(project=project, payload=warm)
    ((scorers, config),) = data.passes(gen_traces)
    rule = rule_create(
        project=project, data={"name": "ten checks", "scorers": scorers, "config": config, "sample_rate": SAMPLE_RATE}
    )
    return key, rule, traces


def server_start(port, log):
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "evalsite.wsgi", "--bind", f"127.0.0.1:{port}", "--workers", "1",
         "--threads", "1", "--worker-class", "gthread", "--timeout", "300", "--log-level", "warning"],
        cwd=ROOT, env=dict(os.environ), stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    for _ in range(200):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1)
            return process
        except OSError:
            time.sleep(0.1)
    raise SystemExit(f"the web process did not start; see {log.name}")


class Ingestion(threading.Thread):
    """One client POSTing rounds of the workload's runs until ``stop`` is set."""

    def __init__(self, url, key, traces, project=None):
        super().__init__(daemon=True)
        self.url, self.traces, self.project = url, traces, project
        self.headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
        self.stop = threading.Event()
        self.posted = 0
        self.sampled = 0  # runs posted that the rule's sample takes
        self.error = None

    def run(self):
        from datasets.ingestion import traces_ingest
        from online.rules import sample_takes

        round_number = 0
        try:
            while not self.stop.is_set():
                prefix = f"r{round_number}-"
                for start in range(0, len(self.traces), BATCH):
                    if self.stop.is_set():
                        return
                    chunk = self.traces[start : start + BATCH]
                    body = {"traces": [production_run(t, prefix) for t in chunk]}
                    if self.project is None:
                        self._post(orjson.dumps(body))
                    else:
                        traces_ingest(project=self.project, payload=body)
                    self.posted += len(chunk)
                    self.sampled += sum(sample_takes(prefix + t["id"], SAMPLE_RATE) for t in chunk)
                round_number += 1
        except Exception as exc:  # reported by the main thread
            self.error = exc
        finally:
            connection.close()

    def _post(self, body):
        request = urllib.request.Request(self.url, data=body, headers=self.headers, method="POST")
        with urllib.request.urlopen(request, timeout=300) as response:
            response.read()
            if response.status != 201:
                raise RuntimeError(f"ingestion answered {response.status}")


def scored_runs(rule):
    """Runs of the rule's passes done so far (each sampled run is one run of one pass)."""
    from django.db.models import Sum

    from online.models import OnlineSample
    from scoring.models import ScoringPass

    passes = OnlineSample.objects.filter(rule=rule, scoring_pass__isnull=False).values("scoring_pass").distinct()
    return ScoringPass.objects.filter(pk__in=passes).aggregate(done=Sum("done"))["done"] or 0


def backlog_sample(rule, ingestion, started):
    from datasets.models import Trace
    from online.models import OnlineRule

    scanned = OnlineRule.objects.filter(pk=rule.pk).values_list("scanned_pk", flat=True).get()
    unscanned = Trace.objects.filter(project_id=rule.project_id, pk__gt=scanned).count()
    sampled, posted = ingestion.sampled, ingestion.posted
    scored = scored_runs(rule)
    return {"t": time.monotonic() - started, "posted": posted, "sampled": sampled, "scored": scored,
            "backlog": max(0, sampled - scored), "unscanned": unscanned}  # fmt: skip


def lag_percentiles(rule):
    """p50 and p95 (seconds) of arrival-to-first-score over the rule's scored runs, and their count."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT count(*),
                   percentile_cont(0.5) WITHIN GROUP (ORDER BY lag),
                   percentile_cont(0.95) WITHIN GROUP (ORDER BY lag),
                   max(lag)
            FROM (SELECT EXTRACT(EPOCH FROM min(s.created_at) - t.ingested_at) AS lag
                  FROM online_onlinesample o
                  JOIN datasets_trace t ON t.id = o.trace_id
                  JOIN scoring_score s ON s.trace_id = t.id
                  WHERE o.rule_id = %s AND o.sampled
                  GROUP BY t.id, t.ingested_at) lags
            """,
            [rule.pk],
        )
        n, p50, p95, worst = cursor.fetchone()
    return {"n": n, "p50": p50, "p95": p95, "max": worst}


def growth_per_minute(samples):
    """Least-squares slope of the backlog (runs per minute) over the second half of the run."""
    half = samples[len(samples) // 2 :]
    if len(half) < 2:
        return 0.0
    ts, ys = [s["t"] for s in half], [s["backlog"] for s in half]
    mt, my = sum(ts) / len(ts), sum(ys) / len(ys)
    var = sum((t - mt) ** 2 for t in ts)
    return 0.0 if var == 0 else 60 * sum((t - mt) * (y - my) for t, y in zip(ts, ys, strict=True)) / var


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--quick", action="store_true", help="a two-minute run")
    parser.add_argument("--sample-seconds", type=float, default=5.0)
    parser.add_argument("--drain-seconds", type=float, default=300.0)
    parser.add_argument("--pool", choices=["solo", "deployed"], default="solo")
    parser.add_argument(
        "--in-process", action="store_true",
        help="ingest with traces_ingest in this process (no HTTP): arrivals faster than one web process sends them",
    )  # fmt: skip
    parser.add_argument("--workloads", type=Path, default=ROOT.parent / "shared" / "workloads")
    args = parser.parse_args()
    seconds = 120.0 if args.quick else args.minutes * 60
    database_recreate()
    key, rule, traces = setup(args.workloads)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"PostgreSQL {connection.pg_version // 10000}; load before {os.getloadavg()[0]:.2f}")  # fmt: skip
    print(f"command: bench/online.py {' '.join(sys.argv[1:])}")
    sender = "traces_ingest in process" if args.in_process else "one web process (1 thread)"
    print(f"rule: {len(data.CHECK_SCORERS)} checks, sample {SAMPLE_RATE:.0%}; runs sent by {sender}, "
          f"one worker ({args.pool}); {seconds:.0f} s of ingestion")  # fmt: skip
    port = free_port()
    with open(VAR_DIR / "web.log", "w") as web_log, open(VAR_DIR / "worker.log", "w") as worker_log:
        server = server_start(port, web_log)
        worker = worker_start("online-bench", worker_log, pool=args.pool)
        try:
            project = rule.project if args.in_process else None
            ingestion = Ingestion(f"http://127.0.0.1:{port}/v1/api/traces", key, traces, project)
            _run(rule, ingestion, seconds, args)
        finally:
            server.terminate()
            worker.terminate()
            server.wait()
            worker.wait()
    lag = lag_percentiles(rule)
    print(f"lag arrival -> first score over {lag['n']} runs: p50 {lag['p50']:.2f} s, p95 {lag['p95']:.2f} s, "
          f"max {lag['max']:.2f} s")  # fmt: skip
    print(f"logs in {VAR_DIR}")


def _run(rule, ingestion, seconds, args):
    started = time.monotonic()
    ingestion.start()
    samples = []
    print(f"{'t (s)':>7} {'posted':>9} {'runs/s':>7} {'sampled':>8} {'scored':>8} {'backlog':>8} {'unscanned':>10}")
    while time.monotonic() - started < seconds and ingestion.error is None:
        time.sleep(args.sample_seconds)
        samples.append(backlog_sample(rule, ingestion, started))
        _print(samples[-1])
    ingestion.stop.set()
    ingestion.join()
    if ingestion.error is not None:
        raise SystemExit(f"ingestion failed: {ingestion.error}")
    ingest_seconds = time.monotonic() - started
    rate = ingestion.posted / ingest_seconds
    growth = growth_per_minute(samples)
    drain_started = time.monotonic()
    while time.monotonic() - drain_started < args.drain_seconds:
        last = backlog_sample(rule, ingestion, started)
        if last["backlog"] == 0 and last["unscanned"] == 0:
            break
        time.sleep(1)
    _print(last)
    print(f"ingested {ingestion.posted} runs in {ingest_seconds:.0f} s: {rate:.0f} runs/s; "
          f"{ingestion.sampled} sampled ({ingestion.sampled / ingest_seconds:.0f}/s, "
          f"{ingestion.sampled * len(data.CHECK_SCORERS) / ingest_seconds:.0f} checks/s)")  # fmt: skip
    print(f"backlog: peak {max(s['backlog'] for s in samples)}, growth over the second half {growth:+.0f} runs/min; "
          f"drained {time.monotonic() - drain_started:.0f} s after the ingestion stopped "
          f"(backlog then {last['backlog']})")  # fmt: skip
    return samples


def _print(s):
    rate = s["posted"] / s["t"] if s["t"] else 0
    print(f"{s['t']:7.0f} {s['posted']:9d} {rate:7.0f} {s['sampled']:8d} {s['scored']:8d} {s['backlog']:8d} "
          f"{s['unscanned']:10d}", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
