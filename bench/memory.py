"""Benchmark: a worker's peak memory over one pass, as the pass grows from 10,000 runs to 1,000,000.

For each size, on a fresh PostgreSQL database: the workload's traces (``gen_traces.py``)
are stored as golden cases and runs, 1,000 at a time (the benchmark's own memory stays
flat too), and one pass of the ten reference checks runs on a fresh worker. The figure
is the worker's peak resident memory (``VmHWM`` of the worker and of each of its pool
processes, the largest one) once the pass is done, with the pass's time. A pass whose
memory is flat has about the same peak at every size.

    .venv/bin/python bench/memory.py [--sizes 10000,100000,1000000] [--pool solo|deployed] [--write]

``--write`` adds the figures to BENCHMARKS.md (between the memory markers).
PostgreSQL: ``BENCH_PG_URL``, database ``BENCH_MEMORY_DB`` (default evalsite_bench_memory,
dropped and recreated for each size); Redis: ``BENCH_REDIS_URL``.
"""

import argparse
import itertools
import json
import os
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

os.environ["BENCH_REFERENCE_DB"] = os.environ.get("BENCH_MEMORY_DB", "evalsite_bench_memory")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import reference as ref
from bench import reference_data as data
from bench.reference_report import worker_start

BEGIN, END = "<!-- memory:begin -->", "<!-- memory:end -->"


def peak_rss_mib(pid):
    """The largest ``VmHWM`` (peak resident set) of process ``pid`` and of its live children, in MiB."""
    peaks = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(line.split(":", 1) for line in status.read_text().splitlines() if ":" in line)
        except OSError:  # gone meanwhile
            continue
        if status.parent.name == str(pid) or fields.get("PPid", "").strip() == str(pid):
            peaks.append(int(fields.get("VmHWM", "0 kB").split()[0]) / 1024)
    return max(peaks, default=0.0)


def store(project, traces_path):
    """The traces as cases and runs, 1,000 at a time; returns how many."""
    from datasets.ingestion import traces_ingest
    from datasets.models import Dataset

    Dataset.objects.create(project=project, name=ref.EXPERIMENT)
    stored = 0
    with open(traces_path) as lines:
        while batch := [json.loads(line) for line in itertools.islice(lines, 1000)]:
            data.cases_add(project, ref.EXPERIMENT, batch)
            for body in data.payloads(batch, ref.EXPERIMENT, ref.EXPERIMENT):
                traces_ingest(project=project, payload=body)
            stored += len(batch)
    return stored


def size_measure(size, pool, workloads):
    ref.database_recreate()
    from evalsite.projects import project_create

    project = project_create(slug="bench", name="bench")
    traces_path = ref.VAR_DIR / f"traces-{size}.jsonl"
    subprocess.run([sys.executable, str(workloads / "gen_traces.py"), str(size), str(traces_path)], check=True)
    started = time.perf_counter()
    runs = store(project, traces_path)
    stored_s = time.perf_counter() - started
    traces_path.unlink()
    scorers, config = data.passes(data.workload(workloads))[0]
    queue = f"bench-{uuid.uuid4().hex[:8]}"
    with open(ref.VAR_DIR / f"worker-{size}.log", "w") as log:
        worker = worker_start(queue, log, pool)
        try:
            idle = peak_rss_mib(worker.pid)
            scoring_pass, seconds = ref.pass_run(project, scorers, config, queue)
            peak = peak_rss_mib(worker.pid)
        finally:
            worker.terminate()
            worker.wait()
    return {
        "runs": runs, "stored_s": round(stored_s, 1), "pass_s": round(seconds, 1), "written": scoring_pass.written,
        "idle_mib": round(idle), "peak_mib": round(peak),
    }  # fmt: skip


def report_markdown(figures, pool, command, load):
    base = figures[0]["peak_mib"]
    lines = [
        f"Measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {ref.machine()}; load average {load[0]:.2f} before,"
        f" {os.getloadavg()[0]:.2f} after; worker pool `{pool}`.",
        "",
        "```",
        f".venv/bin/python bench/memory.py {command}".rstrip(),
        "```",
        "",
        "| runs in the pass | scores written | pass | worker idle | worker peak | peak against the smallest |",
        "|---:|---:|---:|---:|---:|---:|",
        *(
            f"| {f['runs']:,} | {f['written']:,} | {f['pass_s']} s | {f['idle_mib']} MiB | {f['peak_mib']} MiB "
            f"| {f['peak_mib'] / base:.2f}x |"
            for f in figures
        ),
    ]
    return "\n".join(lines)


def report_write(text, path):
    current = path.read_text()
    block = f"{BEGIN}\n{text}\n{END}"
    if BEGIN in current and END in current:
        current = current[: current.index(BEGIN)] + block + current[current.index(END) + len(END) :]
    else:
        current = current.rstrip("\n") + "\n\n## A worker's memory over one pass (`bench/memory.py`)\n\n" + block + "\n"
    path.write_text(current)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--pool", choices=["solo", "deployed"], default="solo")
    parser.add_argument("--workloads", type=Path, default=ref.ROOT.parent / "shared" / "workloads")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    load = os.getloadavg()
    figures = []
    for size in [int(s) for s in args.sizes.split(",")]:
        figures.append(size_measure(size, args.pool, args.workloads))
        print(json.dumps(figures[-1]), flush=True)
    text = report_markdown(figures, args.pool, " ".join(sys.argv[1:]), load)
    print(text)
    if args.write:
        report_write(text, ref.ROOT / "BENCHMARKS.md")


if __name__ == "__main__":
    main()
