"""The reference benchmark's worker, and its report as printed and as kept in BENCHMARKS.md."""

import os
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from bench.reference_data import REFERENCE_COUNTS

ROOT = Path(__file__).resolve().parent.parent
BEGIN, END = "<!-- reference:begin -->", "<!-- reference:end -->"


# The worker's pool: one process, or as the Procfile starts it (two processes by default).
POOLS = {"solo": ["--pool", "solo"], "deployed": ["--concurrency", "2"]}


def worker_start(queue, log, pool="solo", module="celery"):
    """One Celery worker on ``queue`` with ``pool`` (``POOLS``), once it answers a heartbeat.

    ``module`` is what ``python -m`` runs with celery's arguments: ``celery``, or
    ``bench.worker_storing_nothing``.
    """
    from evalsite.models import Heartbeat
    from evalsite.tasks import heartbeat

    process = subprocess.Popen(
        [sys.executable, "-m", module, "-A", "evalsite", "worker", *POOLS[pool], "--queues", queue,
         "--loglevel", "WARNING", "--without-gossip", "--without-mingle", "--without-heartbeat",
         "--hostname", f"{queue}@%h"],
        cwd=ROOT, env=dict(os.environ), stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    heartbeat.apply_async(queue=queue)
    deadline = time.monotonic() + 120
    while not Heartbeat.objects.filter(hostname__startswith=queue).exists():
        if process.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"the worker did not start; see {log.name}")
        time.sleep(0.1)
    return process


def cpu_seconds(pid):
    """User + system CPU time so far of a process and of its live children (a prefork pool's)."""
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # gone meanwhile
            continue
        if stat.parent.name == str(pid) or fields[1] == str(pid):
            total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


GOAL = "goal ≥ 35%, then 50%"
PASS_TITLES = (
    ("pass_deployed", "scoring pass, 10 checks, one worker as the Procfile starts it (2 processes)", GOAL),
    ("pass", "scoring pass, 10 checks, one worker of one process (solo pool)", GOAL),
    ("pass_narrow", "the same pass storing narrow integer-keyed score rows (2 processes), no reason or detail",
     "what that shape of score row would reach with this loading and scoring"),
    ("pass_narrow_no_config", "the same, storing no config either (2 processes)",
     "what narrow rows and configs stored once per distinct config would reach"),
    ("pass_unstored", "the same pass storing no row (2 processes): the ceiling any score storage leaves",
     "the most a pass can reach with this loading and scoring"),
)  # fmt: skip


def pass_share(p, limit_db):
    """A pass's checks/s as a share of the whole-job limit measured in the same run."""
    return p["checks_per_s"] / limit_db["checks_per_s"]


def _pass_figure(p, limit_db, limit, title, note):
    return (
        title,
        f"{p['checks_per_s']:,.0f} checks/s ({' + '.join(f'{s} s' for s in p['seconds'])}; worker CPU {p['worker_cpu']:.1f} s)",
        f"whole-job limit {limit_db['checks_per_s']:,.0f} checks/s (check + COPY only: {limit['limit_checks_per_s']:,.0f})",
        f"**{pass_share(p, limit_db):.1%}** ({note}; {p['checks_per_s'] / limit['limit_checks_per_s']:.1%} of check + COPY)",
    )  # fmt: skip


def _limit_db_figure(limit_db):
    steps = limit_db["no_index"]
    return (
        "the whole-job limit itself (read, check, write; median)",
        f"{steps['total']:.2f} s: read {steps['read']:.2f} s, check {steps['check']:.2f} s, write {steps['write']:.2f} s",
        f"with a primary key on the scores {limit_db['with_pk']['checks_per_s']:,.0f} checks/s", "",
    )  # fmt: skip


def _figures(r):
    limit, limit_db, engine, gate, compare = r["limit"], r["limit_db"], r["engine"], r["gate"], r["compare"]
    return [
        *(_pass_figure(r[key], limit_db, limit, title, note) for key, title, note in PASS_TITLES),
        _limit_db_figure(limit_db),
        ("scorer engine over runs in memory", f"{engine['us_per_check']:.2f} µs/check (median of {engine['rounds']})",
         f"plain loop {engine['loop_us_per_check']:.2f} µs/check, in turns with it",
         f"**{engine['ratio']:.1f}x** (goal ≤ 5 µs, about 2.9x a 1.7 µs loop)"),
        ("ingestion, 1,000 runs a request, in process", f"{r['ingest']['runs_per_s']:,.0f} runs/s", "", ""),
        (f"gate, {gate['cases']:,} cases, scores present, in process", f"{gate['first_s']:.2f} s, again {gate['again_s']:.2f} s",
         f"answer stored {gate['answer_bytes'] / 1e6:.1f} MB", f"{gate['again_s'] / 2:.2f}x the 2 s goal"),
        _gate_http_figure(gate),
        (f"gate, {gate['small']} cases, p95 of 20", f"{gate['small_p95_s'] * 1000:.0f} ms (slowest {gate['small_max_s'] * 1000:.0f} ms)", "",
         f"**{gate['small_p95_s'] / 0.1:.1f}x** the 100 ms goal"),
        (f"compare, 2 x {compare['runs']:,} runs ({compare['scores']:,} scores)",
         f"{compare['median_s'] * 1000:.0f} ms median from the summaries ({compare['flips']:,} flipped)",
         f"from the scores {compare['from_scores_s']:.2f} s; summaries built in {compare['build_s']:.2f} s",
         f"**{(compare['median_s'] + compare['build_s']) / 0.3:.1f}x** the 300 ms goal with the build "
         f"({compare['median_s'] / 0.3:.2f}x without)"),
        ("compare after a gate's 50 scores were written into the candidate",
         f"{compare['kept_s'] * 1000:.0f} ms median: its summary was extended ({compare['small_write_s'] * 1000:.0f} ms "
         f"to write them), not dropped", f"dropped, it reads the scores: {compare['from_scores_s']:.2f} s",
         f"{compare['kept_s'] / 0.3:.2f}x the 300 ms goal"),
    ]  # fmt: skip


def _gate_http_figure(gate):
    """The gate as a CI job gets it: through HTTP, its answer, then every page of cases."""
    http = gate["http"]
    posts = sorted(http["post_s"])
    median = posts[len(posts) // 2]
    return (
        f"gate, {gate['cases']:,} cases, through HTTP (`POST /v1/api/gate`, one process, one thread)",
        f"{median:.2f} s median of {', '.join(f'{s:.2f}' for s in http['post_s'])} s; "
        f"answer {http['answer_bytes'] / 1e6:.2f} MB",
        f"all {http['cases_listed']:,} cases listed after {http['pages']} more pages ({http['pages_s']:.1f} s)",
        f"**{median / 2:.2f}x** the 2 s goal, answer {http['answer_bytes'] / 1e6:.2f}x the 1 MB goal",
    )


def report_markdown(r):
    lines = [
        f"Measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {r['machine']}; load average "
        f"{r['load_before'][0]:.2f} before, {r['load_after'][0]:.2f} after.",
        "",
        "```",
        f".venv/bin/python bench/reference.py {r['command']}".rstrip(),
        "```",
        "",
        "| figure | evalsite | limit (same run) | ratio |",
        "|---|---|---|---|",
        *(f"| {a} | {b} | {c} | {d} |" for a, b, c, d in _figures(r)),
        "",
        "| check | plain loop passes (same traces) | evalsite | agrees |",
        "|---|---:|---:|---|",
        *(
            f"| {check} | {expected:,} | {r['counts'][check]:,} | {'yes' if r['counts'][check] == expected else 'NO'} |"
            for check, expected in r["limit"]["pass_counts"].items()
        ),
        *(_reference_line(r) if r["limit"]["n"] == 10_000 else ()),
        "",
        f"The whole-job limit's counts {'equal' if r['limit_db']['pass_counts'] == r['limit']['pass_counts'] else 'DIFFER from'} the plain loop's.",
        "",
        "cProfile of the pass (ten checks) run in the benchmark's process, own time:",
        "",
        "```",
        r["profile"],
        "```",
    ]
    return "\n".join(lines)


def _reference_line(r):
    same = r["limit"]["pass_counts"] == REFERENCE_COUNTS
    return [
        "",
        f"The plain loop's counts {'equal' if same else 'DIFFER from'} the workload README's for 10,000 traces.",
    ]


def report_print(report):
    print(report_markdown(report))


def report_write(report, path):
    """Replace the text between the reference markers of ``path`` (appended when absent)."""
    text = path.read_text()
    block = f"{BEGIN}\n{report_markdown(report)}\n{END}"
    if BEGIN in text and END in text:
        text = text[: text.index(BEGIN)] + block + text[text.index(END) + len(END) :]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    path.write_text(text)
