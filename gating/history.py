"""A case across versions: its outcome in each recent experiment, how often it flips, which cases are flaky.

Read from the gate's per-case rows (``GateCase``): a case's outcome in an experiment is
its result in the newest finished gate run of that experiment.
"""

from gating.models import GateCase, GateRun

DEFAULT_EXPERIMENTS = 20


def _outcome(row):
    if not row["measured"]:
        return "unmeasured"
    return "passed" if row["passed"] else "failed"


def case_history(*, case, limit=DEFAULT_EXPERIMENTS):
    """``{"experiments": [...], "flip_rate"}``: the case in its last ``limit`` experiments, newest first.

    Each entry: the experiment, its gate run, the outcome (passed, failed or
    unmeasured), flaky, and the trials (counts and each trial's outcome). ``flip_rate``
    is the share of consecutive experiments whose outcomes differ (None with fewer than two).
    """
    rows = (
        GateCase.objects.filter(case=case, gate_run__status=GateRun.Status.DONE)
        .order_by("-gate_run__created_at", "-gate_run_id")
        .values("gate_run_id", "gate_run__experiment__name", "gate_run__created_at", "passed", "measured", "flaky",
                "quarantined", "result")
    )  # fmt: skip
    entries, seen = [], set()
    for row in rows.iterator(chunk_size=200):
        experiment = row["gate_run__experiment__name"]
        if experiment in seen:
            continue
        seen.add(experiment)
        result = row["result"]
        entries.append(
            {
                "experiment": experiment,
                "gate_run_id": row["gate_run_id"],
                "at": row["gate_run__created_at"],
                "outcome": _outcome(row),
                "flaky": row["flaky"],
                "quarantined": row["quarantined"],
                "trials": result.get("trials", 1 if row["measured"] else 0),
                "passed_trials": result.get("passed_trials", 1 if row["passed"] else 0),
                "trial_results": result.get("trial_results", []),
            }
        )
        if len(entries) == limit:
            break
    pairs = list(zip(entries, entries[1:], strict=False))
    flips = sum(1 for newer, older in pairs if newer["outcome"] != older["outcome"])
    return {"experiments": entries, "flip_rate": flips / len(pairs) if pairs else None}


def cases_flaky(cases, *, dataset, limit=DEFAULT_EXPERIMENTS):
    """``cases`` narrowed to those flaky in any of the dataset's last ``limit`` gated experiments."""
    return cases.filter(pk__in=flaky_case_ids(dataset=dataset, limit=limit))


def flaky_case_ids(*, dataset, limit=DEFAULT_EXPERIMENTS):
    """Ids of the dataset's cases that were flaky in any of its last ``limit`` gated experiments."""
    newest = {}
    for gate_run_id, experiment_id in (
        GateRun.objects.filter(dataset=dataset, status=GateRun.Status.DONE)
        .order_by("-created_at", "-id")
        .values_list("id", "experiment_id")
        .iterator(chunk_size=500)
    ):
        newest.setdefault(experiment_id, gate_run_id)
        if len(newest) == limit:
            break
    return set(
        GateCase.objects.filter(gate_run_id__in=newest.values(), flaky=True, case__isnull=False).values_list(
            "case_id", flat=True
        )
    )
