"""What a gate reads from ``datasets``: the dataset's active cases and each case's trials.

All runs of one case within one experiment are that case's trials. A run's ``trial``
numbers it; runs sent without one are numbered 1, 2, 3... in the order they started.
When two runs carry the same number (a CI job re-run for the same commit sends its
runs again), the one that started last counts and the others are *superseded*: listed,
never counted, so a re-run adds runs and never breaks the gate. They stay evidence: the
gate scores them too, and a case whose superseded run failed is flaky (``retried``).

``inputs_differing`` names the runs whose input does not hold their case's
(``checks.input_match``), for the policy's ``input_match``.
"""

from dataclasses import dataclass, field

from checks.input_match import input_contains
from datasets.models import CaseStatus, GoldenCase, Trace
from evalsite.bulk import json_loads, json_text

RUN_FIELDS = ("id", "trace_id", "case_id", "trial", "latency_ms", "cost_cents")


@dataclass
class CaseTrialRuns:
    trials: list = field(default_factory=list)  # [(trial number, run values)] in trial order
    superseded: list = field(default_factory=list)  # trace ids of runs another run of their trial replaced
    superseded_runs: list = field(default_factory=list)  # [(trial number, run values)] of those runs, in start order


def active_cases(dataset):
    """The dataset's active cases in id order (the report's order), as dicts."""
    rows = (
        GoldenCase.objects.filter(dataset=dataset, status=CaseStatus.ACTIVE)
        .order_by("id")
        .annotate(expected_text=json_text("expected_output"), expectations_text=json_text("expectations"))
        .values_list("id", "name", "version", "expected_text", "expectations_text", "quarantined", "quarantine_reason")
    )
    return [
        {
            "id": pk,
            "name": name,
            "version": version,
            "expected_output": json_loads(expected),
            "expectations": json_loads(expectations),
            "quarantined": quarantined,
            "quarantine_reason": reason,
        }
        for pk, name, version, expected, expectations, quarantined, reason in rows
    ]


def trials_of_cases(experiment, dataset, case_ids):
    """``{case_id: CaseTrialRuns}``: each case's runs in the experiment, grouped in trials.

    The runs are read by their dataset (a join), not by a list of every case id, so
    the query stays one small statement however many cases the gate has.
    """
    wanted = set(case_ids)
    by_case = {}
    runs = (
        Trace.objects.filter(experiment=experiment, case__dataset=dataset)
        .order_by("case_id", "started_at", "id")
        .values_list(*RUN_FIELDS)
    )
    for values in runs:
        if values[2] in wanted:
            by_case.setdefault(values[2], []).append(dict(zip(RUN_FIELDS, values, strict=True)))
    return {case_id: trials_group(runs) for case_id, runs in by_case.items()}


def trials_group(runs):
    """``CaseTrialRuns`` of one case's runs, given in the order they started."""
    numbered, next_free, superseded = {}, 1, []
    for run in runs:
        number = run["trial"]
        if number is None:
            number, next_free = next_free, next_free + 1
        if number in numbered:
            superseded.append((number, numbered[number]))
        numbered[number] = run
    return CaseTrialRuns(
        trials=sorted(numbered.items()),
        superseded=[run["trace_id"] for _, run in superseded],
        superseded_runs=superseded,
    )


def inputs_differing(experiment, dataset):
    """The ids of the experiment's runs of the dataset's active cases whose input does not contain
    their case's input. One query; only the two inputs of each run are read."""
    rows = (
        Trace.objects.filter(experiment=experiment, case__dataset=dataset, case__status=CaseStatus.ACTIVE)
        .annotate(run_text=json_text("input"), case_text=json_text("case__input"))
        .values_list("id", "run_text", "case_text")
    )
    return {pk for pk, run_text, case_text in rows if not input_contains(json_loads(run_text), json_loads(case_text))}
