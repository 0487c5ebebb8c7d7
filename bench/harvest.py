"""Benchmark: grouping 100,000 failing production runs on one worker, and one incremental update.

    .venv/bin/python bench/harvest.py [--runs 100000] [--update 500]

Runs on PostgreSQL (``BENCH_PG_URL``, default postgresql://postgres@127.0.0.1:5432; the
database ``evalsite_bench_harvest`` is dropped and recreated). The traffic: ``--runs``
failing production runs drawn from 40 failure modes of Zipf-like sizes (10 signatures:
failed checks, negative feedback, judge abstentions, errors, over several tool shapes;
4 input templates per signature with slots of names, places and numbers), each run
with one or two tool spans and a passing score beside its failure. Then
``harvest.services.groups_build`` (what a worker's ``harvest.build`` runs) is timed,
with its peak of Python memory (tracemalloc, numpy's arrays included) and the process's
peak resident size; then ``--update`` new failing runs are scored and one
``groups_update`` (a tick) places them, timed; then a tick with nothing new.
"""

import argparse
import os
import platform
import random
import resource
import sys
import time
import tracemalloc
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
PG_SERVER = os.environ.get("BENCH_PG_URL", "postgresql://postgres@127.0.0.1:5432")
PG_DB = "evalsite_bench_harvest"

WORDS = {
    "name": ["Ana", "Luis", "Marta", "Kenji", "Olu", "Priya", "Sven", "Chen", "Ines", "Tomas"],
    "place": ["Paris", "Lima", "Oslo", "Rome", "Quito", "Tokyo", "Cairo", "Lagos", "Porto", "Seoul"],
    "thing": ["invoice", "ticket", "booking", "parcel", "voucher", "contract", "report", "badge"],
    "day": ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"],
}
TEMPLATES = [
    "Book a table for {n} people in {place} on {day} under the name {name}",
    "Refund order {n}: the {thing} arrived damaged at my address in {place}",
    "Translate the {thing} from {name} into French before {day}",
    "Cancel my {thing} number {n} and email {name} the confirmation",
    "How many vacation days does {name} have left this year",
    "Summarize the last {n} messages from {name} about the {thing}",
    "Find flights from {place} to {place} leaving {day} morning",
    "Create a reminder to call {name} about the {thing} on {day}",
    "What is the status of the {thing} shipped to {place}",
    "Compare the prices of {n} hotels near the station in {place}",
]
SIGNATURES = [
    {"failed": ["tool_choice"], "tools": ["search"]},
    {"failed": ["tool_choice", "tool_output"], "tools": ["quote", "book"]},
    {"failed": ["json_valid"], "tools": []},
    {"failed": ["no_tool_loop"], "tools": ["search", "search"]},
    {"failed": ["latency_budget"], "tools": ["fetch"]},
    {"feedback": True, "tools": ["lookup"]},
    {"feedback": True, "tools": []},
    {"abstained": "helpfulness", "tools": ["fetch_notes"]},
    {"error": "TimeoutError: upstream took 30 s", "tools": ["search"]},
    {"error": "ValueError: bad date", "tools": ["book"]},
]


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


def modes():
    """40 modes: (signature, template), sizes falling off like 1/rank."""
    rng = random.Random(3)
    out = []
    for s, signature in enumerate(SIGNATURES):
        for template in rng.sample(TEMPLATES, 4):
            out.append((s, signature, template))
    rng.shuffle(out)
    weights = [1 / (rank + 1) for rank in range(len(out))]
    return out, weights


def fill(template, rng):
    return template.format(n=rng.randint(2, 999), name=rng.choice(WORDS["name"]), place=rng.choice(WORDS["place"]),
                           thing=rng.choice(WORDS["thing"]), day=rng.choice(WORDS["day"]))  # fmt: skip


def traffic_write(project, count, *, prefix, seed):
    """``count`` failing production runs (traces, tool spans, scores, abstentions) written in bulk."""
    from django.utils import timezone

    from datasets.models import Span, Trace
    from scoring.models import Abstention, Score

    rng, now = random.Random(seed), timezone.now()
    table, weights = modes()
    picks = rng.choices(range(len(table)), weights=weights, k=count)
    for start in range(0, count, 5000):
        batch = picks[start : start + 5000]
        traces = [
            Trace(project=project, trace_id=f"{prefix}{start + i}", name="agent", input=fill(table[m][2], rng),
                  output="Done.", status="error" if table[m][1].get("error") else "ok",
                  error=table[m][1].get("error"), started_at=now - timedelta(minutes=rng.uniform(1, 60 * 24 * 6)),
                  metadata={"mode": m})
            for i, m in enumerate(batch)
        ]  # fmt: skip
        Trace.objects.bulk_create(traces)
        spans, scores, abstentions = [], [], []
        for trace, m in zip(traces, batch, strict=True):
            signature = table[m][1]
            for k, tool in enumerate(signature["tools"]):
                spans.append(Span(trace=trace, span_id=f"s{k}", kind="tool", name=tool, started_at=trace.started_at))
            scores.append(Score(project=project, trace=trace, scorer="answered", config_hash="0" * 64, value=1,
                                passed=True))  # fmt: skip
            for scorer in signature.get("failed", []):
                scores.append(Score(project=project, trace=trace, scorer=scorer, config_hash="0" * 64, value=0,
                                    passed=False, reason=f"{scorer} failed on this run"))  # fmt: skip
            if signature.get("feedback"):
                scores.append(Score(project=project, trace=trace, scorer="feedback:thumbs", config_hash="1" * 64,
                                    value=0, passed=False, source="feedback", reason="wrong"))  # fmt: skip
            if signature.get("abstained"):
                abstentions.append(Abstention(project=project, trace=trace, scorer=signature["abstained"],
                                              reason="prose_reply"))  # fmt: skip
        Span.objects.bulk_create(spans, batch_size=5000)
        Score.objects.bulk_create(scores, batch_size=5000)
        Abstention.objects.bulk_create(abstentions, batch_size=5000)


def purity(project):
    """Share of the runs in a group whose planted mode is the group's majority mode (1.0: no group mixes modes)."""
    from collections import Counter

    from harvest.models import FailureMember

    by_group = {}
    for group_id, metadata in FailureMember.objects.filter(project=project).values_list("group_id", "trace__metadata"):
        by_group.setdefault(group_id, Counter())[metadata["mode"]] += 1
    total = sum(sum(c.values()) for c in by_group.values())
    return sum(c.most_common(1)[0][1] for c in by_group.values()) / total, len(by_group)


def analyze():
    """Fresh planner statistics, as autovacuum keeps them after a large write."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def timed(function, **kwargs):
    started = time.perf_counter()
    result = function(**kwargs)
    return result, time.perf_counter() - started


def python_peak(function, **kwargs):
    """The peak of Python memory (numpy's arrays included) while ``function`` runs; tracing slows it, so
    this is a second call, not the timed one."""
    tracemalloc.start()
    function(**kwargs)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--update", type=int, default=500)
    args = parser.parse_args()
    database_recreate()
    django_setup()
    from django.db import connection

    from evalsite.projects import project_create
    from harvest.services import groups_build, groups_update

    project = project_create(slug="bench", name="Bench")
    started = time.perf_counter()
    traffic_write(project, args.runs, prefix="run-", seed=1)
    analyze()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"PostgreSQL {connection.pg_version // 10000}")  # fmt: skip
    print(f"traffic: {args.runs} failing runs written in {time.perf_counter() - started:.1f} s")
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    groups, elapsed = timed(groups_build, project_id=project.pk)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    again, elapsed_again = timed(groups_build, project_id=project.pk)
    peak = python_peak(groups_build, project_id=project.pk)
    share, count = purity(project)
    print(f"full build: {groups} groups in {elapsed:.2f} s, Python peak {peak / 2**20:.0f} MiB, "
          f"process peak RSS {rss:.0f} MiB ({rss_before:.0f} before); again over its own groups: {again} in "
          f"{elapsed_again:.2f} s; runs in their group's majority mode: {share:.4f} ({count} groups)")  # fmt: skip
    traffic_write(project, args.update, prefix="late-", seed=2)
    analyze()
    placed, elapsed = timed(groups_update, project_id=project.pk)
    print(f"update: {placed} new failing runs placed in {elapsed:.2f} s")
    placed, elapsed = timed(groups_update, project_id=project.pk)
    print(f"update with nothing new: {placed} placed in {elapsed:.3f} s")


if __name__ == "__main__":
    main()
