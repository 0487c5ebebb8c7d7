"""The reference workload mapped onto evalsite: golden cases, runs and the closest scorers.

Each trace of ``gen_traces.py`` becomes a golden case (its expected answer, the
required substring as ``contains``, the expected tool sequence as ``expected_tools``)
and a run of the experiment ``reference`` linked to it, with one tool span per tool
call (name, input, output, error). The ten checks map onto these scorers:

| check | scorer | config |
|---|---|---|
| non_empty | answered | |
| contains | contains | the case's ``contains`` |
| equals | exact_match | the case's expected answer |
| is_json | json_valid | none |
| schema | json_valid | ``{"schema": SCHEMA}`` (named a second time in the same pass, with this config) |
| latency | latency_budget | ``{"ms": 6000}`` |
| cost | cost_budget | ``{"cents": 4.0}`` |
| no_secret | no_leaked_secret | |
| not_refusal | not_a_refusal | |
| tool_sequence | tool_choice | the case's ``expected_tools`` (exact) |
"""

import importlib.util
import json
import sys
from pathlib import Path

from django.db import connection

# check name -> (0: named by id, 1: named with its own config, scorer id)
CHECK_SCORERS = {
    "non_empty": (0, "answered"),
    "contains": (0, "contains"),
    "equals": (0, "exact_match"),
    "is_json": (0, "json_valid"),
    "schema": (1, "json_valid"),
    "latency": (0, "latency_budget"),
    "cost": (0, "cost_budget"),
    "no_secret": (0, "no_leaked_secret"),
    "not_refusal": (0, "not_a_refusal"),
    "tool_sequence": (0, "tool_choice"),
}
REFERENCE_COUNTS = {
    "non_empty": 9501, "contains": 6880, "equals": 5056, "is_json": 4493, "schema": 3489,
    "latency": 7455, "cost": 7937, "no_secret": 8974, "not_refusal": 9002, "tool_sequence": 7539,
}  # fmt: skip


def workload(path):
    """The workload's ``gen_traces`` module (the check definitions), imported from its folder."""
    sys.path.insert(0, str(path))
    import gen_traces

    return gen_traces


def plain_checks(path):
    """The workload's plain check loop (its ``checks.py``, imported under another name than evalsite's ``checks``)."""
    workload(path)  # its gen_traces, which checks.py imports
    spec = importlib.util.spec_from_file_location("workload_checks", Path(path) / "checks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def passes(gen_traces):
    """The pass's request, ``[(scorers, config)]``: ``json_valid`` named twice, without and with the schema."""
    scorers = [
        scorer if number == 0 else {"scorer": scorer, "config": {"schema": gen_traces.SCHEMA}}
        for number, scorer in CHECK_SCORERS.values()
    ]
    budgets = {
        "latency_budget": {"ms": gen_traces.LATENCY_BUDGET_MS},
        "cost_budget": {"cents": gen_traces.COST_BUDGET_CENTS},
    }
    return [(scorers, budgets)]


def traces_read(path):
    with open(path) as f:
        return [json.loads(line) for line in f]


def cases_create(project, name, traces):
    """A dataset ``name`` with one golden case per trace (``case-<trace id>``)."""
    from datasets.models import Dataset

    dataset = Dataset.objects.create(project=project, name=name)
    cases_add(project, name, traces)
    return dataset


def cases_add(project, name, traces):
    """One golden case per trace (``case-<trace id>``) in the project's dataset ``name``."""
    from datasets.models import Dataset, GoldenCase

    dataset = Dataset.objects.get(project=project, name=name)
    GoldenCase.objects.bulk_create(
        [
            GoldenCase(
                dataset=dataset,
                name=f"case-{t['id']}",
                input=t["input"],
                expected_output=t["expected"],
                expectations={"contains": t["required"], "expected_tools": t["expected_tools"]},
            )
            for t in traces
        ],
        batch_size=2000,
    )


def run_payload(trace, dataset, experiment, prefix=""):
    spans = []
    for n, call in enumerate(trace["tool_calls"]):
        span = {"span_id": f"tool-{n}", "kind": "tool", "name": call["name"], "input": call["input"]}
        span["output"] = call["output"]
        if "error" in call:
            span.update(status="error", error=call["error"])
        spans.append(span)
    return {
        "trace_id": prefix + trace["id"], "experiment": experiment, "dataset": dataset, "case": f"case-{trace['id']}",
        "input": trace["input"], "output": trace["output"], "started_at": "2026-11-30T10:00:00Z",
        "latency_ms": trace["latency_ms"], "cost_cents": trace["cost_cents"], "spans": spans,
    }  # fmt: skip


def payloads(traces, dataset, experiment, prefix="", batch=1000):
    """The ingestion request bodies for ``traces``, ``batch`` runs each."""
    return [
        {"traces": [run_payload(t, dataset, experiment, prefix) for t in traces[start : start + batch]]}
        for start in range(0, len(traces), batch)
    ]


def pass_counts(experiment, gen_traces):
    """``{check: passed scores}`` over the runs of ``experiment``.

    ``json_valid`` is told apart by its config (none for ``is_json``, the schema for
    ``schema``). ``not_refusal`` also counts the ``no_answer`` abstentions: the plain
    check passes an empty answer, ``not_a_refusal`` abstains on it (``answered`` is
    the check that fails it).
    """
    from checks.scorers import config_hash

    hashes = {"is_json": config_hash({}), "schema": config_hash({"schema": gen_traces.SCHEMA})}
    counts = {}
    with connection.cursor() as cursor:
        for check, (_, scorer) in CHECK_SCORERS.items():
            sql = "SELECT count(*) FROM scoring_score WHERE experiment_id = %s AND scorer = %s AND passed"
            params = [experiment.pk, scorer]
            if check in hashes:
                sql += " AND config_hash = %s"
                params.append(hashes[check])
            cursor.execute(sql, params)
            counts[check] = cursor.fetchone()[0]
        cursor.execute(
            "SELECT count(DISTINCT trace_id) FROM scoring_abstention WHERE experiment_id = %s "
            "AND scorer = 'not_a_refusal' AND reason = 'no_answer'",
            [experiment.pk],
        )
        counts["not_refusal"] += cursor.fetchone()[0]
    return counts


def compare_side(project, name, runs, scorers, pass_share):
    """An experiment of ``runs`` runs, each linked to case number i and scored by every scorer (COPY).

    Case ids are 1..runs on both sides, so the flipped-cases step pairs every run; no
    case rows are created (scores keep a case id without a database constraint).
    """
    from django.db import transaction
    from django.utils import timezone

    from datasets.models import Experiment, Trace
    from evalsite.bulk import ids_allocate, rows_insert
    from scoring.score_configs import score_configs_store

    experiment = Experiment.objects.create(project=project, name=name)
    now = timezone.now()
    threshold = int(pass_share * 1000)
    with transaction.atomic():
        score_configs_store(project_id=project.pk, configs={"h": "{}"})
        ids = ids_allocate(Trace, runs)
        rows_insert(
            Trace._meta.db_table,
            ("id", "project_id", "trace_id", "name", "status", "started_at", "metadata", "tags", "source",
             "content_hash", "ingested_at", "experiment_id"),
            [(pk, project.pk, f"{name}-{pk}", "bench", "ok", now, "{}", "[]", "api", "", now, experiment.pk)
             for pk in ids],
        )  # fmt: skip
        rows_insert(
            "scoring_score",
            ("project_id", "trace_id", "scorer", "scorer_version", "config_hash", "value", "passed", "reason",
             "detail", "source", "experiment_id", "case_id", "run_revision", "created_at"),
            [(project.pk, pk, scorer, "1", "h", float(ok), ok, "", "{}", "builtin", experiment.pk, case, 1, now)
             for case, pk in enumerate(ids, 1)
             for n, scorer in enumerate(scorers)
             for ok in [(pk * 7 + n) % 1000 < threshold]],
        )  # fmt: skip
    return experiment
