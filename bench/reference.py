"""Benchmark: evalsite on the reference workload, against the limit measured in the same run.

The workload (``../shared/workloads``: N deterministic agent traces x 10 checks) is
mapped onto golden cases, runs and the closest scorers (``bench/reference_data.py``).
In one run, on a fresh PostgreSQL database, this measures:

- the limits: ``limit_db.py``, the whole job a pass must do at its minimum cost in this
  very database after ingestion (one binary COPY out of the fields the checks need, the
  plain check loop, a COPY of narrow score rows, committed): every pass is measured
  against it; and ``limit_baseline.py`` (the plain check loop then a COPY, the traces
  read from a file outside its timing), kept as a second yardstick;
- ingestion: the runs (tool calls as tool spans) written by ``traces_ingest``, 1,000
  runs a request, in process;
- the scoring pass: one Celery worker runs the ten checks in one pass (``json_valid``
  named twice, without and with the schema), timed from the request to ``done``, from
  no score at all: once with the worker as the Procfile starts it (prefork, two
  processes), then with one process (solo pool). The pass counts are checked against
  the workload's reference counts. Before them, the same pass on a worker that stores
  no row (``bench.worker_storing_nothing``): the ceiling any storage of scores leaves;
  and on one that stores narrow integer-keyed score rows without reason or detail
  (``bench.worker_storing_narrow``), with its configs and without: what that shape of
  row would reach, and with configs stored once per distinct config;
- the scorer engine over the runs in memory, in µs per check, against the plain loop
  (the two in turns, at least five rounds);
- the gate: N cases with every score present, in process and through HTTP (a gunicorn
  server of one process and one thread: ``POST /v1/api/gate`` three times, its answer's
  size, and every page of cases after it), and a 50-case gate (p95 of 20 calls);
- compare: two experiments of ``--compare-runs`` runs x 10 scorers, flipped cases included,
  from the score summaries (after building them, as a pass does when it ends), after a
  gate's small write into the candidate (which extends its summary rather than dropping
  it), and from the scores (as right after a change drops a summary);
- a cProfile top 10 of one pass run in this process.

    .venv/bin/python bench/reference.py [--traces 10000] [--compare-runs 100000] [--write] [--only pass|gate|compare]

``--write`` puts the report in BENCHMARKS.md (between the reference markers).
PostgreSQL: ``BENCH_PG_URL`` (default postgresql://postgres@127.0.0.1:5432), database
``BENCH_REFERENCE_DB`` (default evalsite_bench_reference, dropped and recreated);
Redis: ``BENCH_REDIS_URL`` (default redis://127.0.0.1:6379/13).
"""

import argparse
import cProfile
import io
import json
import os
import platform
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
PG_SERVER = os.environ.get("BENCH_PG_URL", "postgresql://postgres@127.0.0.1:5432")
PG_DB = os.environ.get("BENCH_REFERENCE_DB", "evalsite_bench_reference")
VAR_DIR = Path(tempfile.mkdtemp(prefix="evalsite-bench-reference-"))
os.environ.update(
    DJANGO_SETTINGS_MODULE="evalsite.settings",
    DATABASE_URL=f"{PG_SERVER}/{PG_DB}",
    REDIS_URL=os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/13"),
    EVALSITE_VAR_DIR=str(VAR_DIR),
    LOG_LEVEL="WARNING",
    DEBUG="0",
)

import django  # noqa: E402

django.setup()

from bench import reference_data as data  # noqa: E402
from bench.reference_report import cpu_seconds, report_print, report_write, worker_start  # noqa: E402  # noqa: E402

PG_DSN = f"host=127.0.0.1 port=5432 user=postgres dbname={PG_DB}"
EXPERIMENT = "reference"


def database_recreate():
    import psycopg
    from django.core.management import call_command
    from django.db import connections

    connections.close_all()
    with psycopg.connect(f"{PG_SERVER}/postgres", autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {PG_DB} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {PG_DB}")
    call_command("migrate", verbosity=0)


def limit_measure(workloads, traces_path, reps):
    out = subprocess.run(
        [sys.executable, str(workloads / "limit_baseline.py"), str(traces_path), "--reps", str(reps), "--pg", PG_DSN],
        check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    limit = json.loads(out)
    checks = limit["n"] * limit["checks_per_case"]
    limit["limit_checks_per_s"] = checks / (limit["check_s"] + limit["db"]["copy_s"])
    limit["loop_us_per_check"] = limit["check_s"] / checks * 1e6
    return limit


def limit_db_measure(workloads, reps):
    """The whole-job limit over the ingested reference experiment: its checks/s and pass counts."""
    out = subprocess.run(
        [sys.executable, str(workloads / "limit_db.py"), "--dsn", PG_DSN, "--experiment", EXPERIMENT,
         "--reps", str(reps)],
        check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    return json.loads(out)


def ingest_measure(project, traces):
    from datasets.ingestion import traces_ingest

    data.cases_create(project, EXPERIMENT, traces)
    bodies = data.payloads(traces, EXPERIMENT, EXPERIMENT)
    started = time.perf_counter()
    for body in bodies:
        traces_ingest(project=project, payload=body)
    seconds = time.perf_counter() - started
    return {"runs": len(traces), "seconds": seconds, "runs_per_s": len(traces) / seconds}


def pass_run(project, scorers, config, queue):
    """Start a pass over the reference experiment and wait for it; ``(pass, seconds)``."""
    from scoring.models import PassStatus, ScoringPass
    from scoring.passes.services import pass_start

    started = time.perf_counter()
    scoring_pass = pass_start(
        project=project, data={"scorers": scorers, "config": config, "experiment": EXPERIMENT, "limit": 1_000_000},
        queue=queue,
    )  # fmt: skip
    while ScoringPass.objects.filter(pk=scoring_pass.pk, status__in=[PassStatus.QUEUED, PassStatus.RUNNING]).exists():
        time.sleep(0.02)
    seconds = time.perf_counter() - started
    scoring_pass.refresh_from_db()
    if scoring_pass.status != PassStatus.DONE:
        raise SystemExit(f"the pass failed: {scoring_pass.error}")
    return scoring_pass, seconds


def passes_measure(project, requests, runs, pool="solo", module="celery"):
    """The pass on a fresh worker with ``pool``, from no score at all (the scores and their configs emptied).

    ``module``: the worker's (``worker_start``); ``bench.worker_storing_nothing`` stores no row.
    """
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("TRUNCATE scoring_score, scoring_abstention, scoring_scoreconfig")
    queue = f"bench-{uuid.uuid4().hex[:8]}"
    with open(VAR_DIR / f"worker-{pool}-{module}.log", "w") as log:
        worker = worker_start(queue, log, pool, module)
        try:
            cpu = cpu_seconds(worker.pid)
            timed = [pass_run(project, scorers, config, queue) for scorers, config in requests]
            cpu = cpu_seconds(worker.pid) - cpu
        finally:
            worker.terminate()
            worker.wait()
    seconds = sum(s for _, s in timed)
    checks = runs * 10
    return {
        "pool": pool,
        "seconds": [round(s, 2) for _, s in timed],
        "written": sum(p.written for p, _ in timed),
        "abstained": sum(p.skipped for p, _ in timed),
        "checks_per_s": checks / seconds,
        "worker_cpu": cpu,
    }


def narrow_pass_measure(project, requests, runs, configs=True):
    """The pass on a worker storing narrow score rows (``bench.worker_storing_narrow``), as deployed;
    with ``configs=False`` it stores no config either."""
    from django.db import connection

    from bench.worker_storing_narrow import TABLE, TABLE_DDL
    from scoring.models import ScoreConfig

    with connection.cursor() as cursor:
        cursor.execute(TABLE_DDL)
        cursor.execute(f"TRUNCATE {TABLE}")
    os.environ["BENCH_NARROW_NO_CONFIGS"] = "0" if configs else "1"
    try:
        measured = passes_measure(project, requests, runs, "deployed", "bench.worker_storing_narrow")
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT count(*) FROM {TABLE}")
            stored = cursor.fetchone()[0]
        if stored != measured["written"]:
            raise SystemExit(f"the worker storing narrow rows stored {stored} of {measured['written']} scores")
        if not configs and ScoreConfig.objects.exists():
            raise SystemExit("the worker storing narrow rows and no config stored configs")
    finally:
        del os.environ["BENCH_NARROW_NO_CONFIGS"]
        with connection.cursor() as cursor:
            cursor.execute(f"DROP TABLE IF EXISTS {TABLE}")
    return measured


def engine_measure(project, requests, reps, workloads, traces):
    """µs per check of the scorer engine over the reference runs in memory, and of the plain loop.

    The two take turns, round after round, so that the machine's drift (its speed moves
    by tens of percent within minutes) weighs on both alike; the ratio is the median of
    the rounds' ratios.
    """
    from datasets.models import Trace
    from scoring.pipeline.engine import outcomes_compute
    from scoring.pipeline.loading import runs_load
    from scoring.selection.catalog import catalog_for
    from scoring.selection.requests import plan_of

    pks = list(Trace.objects.filter(experiment__name=EXPERIMENT).values_list("pk", flat=True))
    runs = [run for start in range(0, len(pks), 1000) for run in runs_load(pks[start : start + 1000])]
    available = catalog_for(project).scorers
    run_all = data.plain_checks(workloads).run_all
    engine, loop = [], []
    for _ in range(max(reps, 5)):
        count = 0
        started = time.perf_counter()
        for scorers, config in requests:
            outcomes, _ = outcomes_compute(plan_of(available, scorers, config), runs)
            count += len(outcomes)
        engine.append((time.perf_counter() - started) / count * 1e6)
        started = time.perf_counter()
        results = [run_all(t) for t in traces]
        loop.append((time.perf_counter() - started) / (len(results) * len(results[0])) * 1e6)
    return {
        "checks": count, "rounds": len(engine), "us_per_check": statistics.median(engine),
        "loop_us_per_check": statistics.median(loop),
        "ratio": statistics.median([e / p for e, p in zip(engine, loop, strict=True)]),
    }  # fmt: skip


def gate_measure(project, traces, small, calls):
    from bench.gate import gate_time, http_measure
    from datasets.ingestion import traces_ingest
    from datasets.models import Dataset

    dataset = Dataset.objects.get(project=project, name=EXPERIMENT)
    first, gate_run = gate_time(project, dataset, EXPERIMENT)
    again, _ = gate_time(project, dataset, EXPERIMENT)
    answer = len(json.dumps(gate_run.result))
    http = http_measure(project, dataset, EXPERIMENT, 3)
    data.cases_create(project, "small", traces[:small])
    for body in data.payloads(traces[:small], "small", "small", prefix="small-"):
        traces_ingest(project=project, payload=body)
    small_dataset = Dataset.objects.get(project=project, name="small")
    gate_time(project, small_dataset, "small")  # scores the small experiment
    _checkpoint()
    timings = sorted(gate_time(project, small_dataset, "small")[0] for _ in range(calls))
    return {
        "cases": len(traces), "first_s": first, "again_s": again, "answer_bytes": answer, "http": http,
        "verdict": f"{gate_run.verdict} {gate_run.passed_cases}/{gate_run.total_cases}",
        "small": small, "small_p95_s": timings[int(0.95 * (len(timings) - 1))], "small_max_s": timings[-1],
    }  # fmt: skip


def _checkpoint():
    """Flush what the benchmark wrote so far before timing small calls.

    Each gate commits three times. Right after the hundreds of megabytes written to set
    the gate up, PostgreSQL's checkpoint keeps the disk busy and a commit can wait
    100-170 ms for its flush: one run in two or three showed one or two such calls out
    of twenty, none with ``synchronous_commit`` off. The figure is the gate's, not the
    disk's catching up with the benchmark's own writes.
    """
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("CHECKPOINT")


def compare_measure(project, runs, reps):
    """Compare from the summaries a pass leaves, from the scores (a summary dropped by a change),
    and from summaries kept through a small write (a gate's) instead of dropped by it."""
    from django.db import connection

    from scoring.passes.summaries import summaries_build, summaries_stats

    scorers = list(data.CHECK_SCORERS)  # ten score columns per run, named after the checks
    base = data.compare_side(project, "compare-base", runs, scorers, 0.9)
    candidate = data.compare_side(project, "compare-candidate", runs, scorers, 0.85)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    started = time.perf_counter()
    summaries_build([base.pk, candidate.pk])  # as the passes that wrote the scores do when they end
    build = time.perf_counter() - started
    summarized = _compare_timed(base, candidate, reps)
    written = _small_write(project, candidate, 50)
    if set(summaries_stats([base.pk, candidate.pk])) != {base.pk, candidate.pk}:
        raise SystemExit("a small write dropped the summary instead of extending it")
    kept = _compare_timed(base, candidate, reps)
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM scoring_score_summary")  # as any other change to the scores does
    from_scores = _compare_timed(base, candidate, reps)
    assert kept[1] == from_scores[1], "compare differs between the kept summaries and the scores"
    flipped = summarized[1]["flipped"]
    return {
        "runs": runs, "scores": runs * len(scorers) * 2, "median_s": summarized[0], "from_scores_s": from_scores[0],
        "build_s": build, "flips": flipped["pass_to_fail_count"] + flipped["fail_to_pass_count"],
        "small_write_s": written, "kept_s": kept[0],
    }  # fmt: skip


def _small_write(project, experiment, count):
    """Seconds to write one new score on each of ``count`` runs of ``experiment`` through the
    scoring writer, as a gate does (its summary kept)."""
    from django.db import transaction

    from checks.scorers import Result
    from datasets.models import Trace
    from scoring.pipeline.engine import Outcome
    from scoring.pipeline.loading import runs_load
    from scoring.pipeline.writer import outcomes_write

    pks = list(Trace.objects.filter(experiment=experiment).order_by("pk").values_list("pk", flat=True)[:count])
    runs = runs_load(pks, spans=False, content=False)
    outcomes = [Outcome(run, "gate_check", "1", "h", "{}", Result(1.0, True, "", {})) for run in runs]
    started = time.perf_counter()
    with transaction.atomic():
        outcomes_write(project=project, pass_id=None, runs=runs, outcomes=outcomes)
    return time.perf_counter() - started


def _compare_timed(base, candidate, reps):
    """(median seconds, answer) of ``reps`` compares."""
    from gating.comparison import experiments_compare

    timings = []
    for _ in range(reps):
        started = time.perf_counter()
        answer = experiments_compare(base=base, candidate=candidate)
        timings.append(time.perf_counter() - started)
    return statistics.median(timings), answer


def profile_pass(project, scorers, config):
    """cProfile top 10 (own time) of one pass run in this process, chunk by chunk."""
    from django.db import connection

    from scoring.models import ScoringChunk
    from scoring.passes.services import chunk_score, pass_plan, pass_start

    with connection.cursor() as cursor:
        cursor.execute("TRUNCATE scoring_score, scoring_abstention")
    profiler = cProfile.Profile()
    profiler.enable()
    scoring_pass = pass_start(
        project=project, data={"scorers": scorers, "config": config, "experiment": EXPERIMENT, "limit": 1_000_000},
        queue=f"bench-profile-{uuid.uuid4().hex[:8]}",
    )  # fmt: skip
    pass_plan(pass_id=scoring_pass.pk)
    for chunk_id in ScoringChunk.objects.filter(scoring_pass=scoring_pass).values_list("pk", flat=True):
        chunk_score(chunk_id=chunk_id, token="profile")
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(10)
    lines = out.getvalue().splitlines()
    start = next(i for i, line in enumerate(lines) if "ncalls" in line)
    return "\n".join(line.replace(str(ROOT) + "/", "") for line in lines[start - 4 : start + 11] if line.strip())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=int, default=10_000)
    parser.add_argument("--compare-runs", type=int, default=100_000)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--workloads", type=Path, default=ROOT.parent / "shared" / "workloads")
    parser.add_argument("--write", action="store_true", help="write the report into BENCHMARKS.md")
    parser.add_argument(
        "--only", choices=["pass", "gate", "compare"],
        help="measure only the passes (after the ingestion they need), the gate (after the passes) or compare; "
        "prints JSON",
    )  # fmt: skip
    args = parser.parse_args()
    if args.only and args.write:
        parser.error("--write needs the whole report: leave out --only")
    report = {"load_before": os.getloadavg(), "command": " ".join(sys.argv[1:])}
    database_recreate()
    report["machine"] = machine()
    from evalsite.projects import project_create

    project = project_create(slug="bench", name="bench")
    if args.only == "compare":
        report["compare"] = compare_measure(project, args.compare_runs, args.reps)
    else:
        _measure_traces(args, project, report)
    report["load_after"] = os.getloadavg()
    if args.only:
        print(json.dumps(report, indent=1))
        return
    report_print(report)
    if args.write:
        report_write(report, ROOT / "BENCHMARKS.md")


def _measure_traces(args, project, report):
    """Everything measured over the workload's traces (all but compare with ``--only gate``, and
    the gate too with ``--only pass``)."""
    gen_traces = data.workload(args.workloads)
    traces_path = VAR_DIR / "traces.jsonl"
    subprocess.run(
        [sys.executable, str(args.workloads / "gen_traces.py"), str(args.traces), str(traces_path)], check=True
    )
    traces = data.traces_read(traces_path)
    if not args.only:
        report["limit"] = limit_measure(args.workloads, traces_path, args.reps)
    report["ingest"] = ingest_measure(project, traces)
    report["limit_db"] = limit_db_measure(args.workloads, args.reps)
    requests = data.passes(gen_traces)
    if not args.only:
        report["pass_unstored"] = passes_measure(
            project, requests, len(traces), "deployed", "bench.worker_storing_nothing"
        )
        from scoring.models import Score, ScoreConfig

        if Score.objects.exists() or ScoreConfig.objects.exists():
            raise SystemExit("the worker storing nothing stored rows: its figure would not be the ceiling")
    report["pass_narrow"] = narrow_pass_measure(project, requests, len(traces))
    report["pass_narrow_no_config"] = narrow_pass_measure(project, requests, len(traces), configs=False)
    report["pass_deployed"] = passes_measure(project, requests, len(traces), "deployed")
    report["pass"] = passes_measure(project, requests, len(traces))
    if args.only == "gate":
        report["gate"] = gate_measure(project, traces, 50, 20)
    if args.only:
        return
    from datasets.models import Experiment

    report["counts"] = data.pass_counts(Experiment.objects.get(project=project, name=EXPERIMENT), gen_traces)
    report["engine"] = engine_measure(project, requests, args.reps, args.workloads, traces)
    report["gate"] = gate_measure(project, traces, 50, 20)
    report["profile"] = profile_pass(project, *requests[0])
    report["compare"] = compare_measure(project, args.compare_runs, args.reps)


def machine():
    from django.db import connection

    return (
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"PostgreSQL {connection.pg_version // 10000}"
    )


if __name__ == "__main__":
    main()
