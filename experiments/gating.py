"""The gate: score what is missing for an experiment's runs of a dataset's active cases,
decide PASS or FAIL, and keep the verdict as a GateRun.

Which checks gate a case: the expectations it has (each turns on the check whose
``gated_by`` names it, ``checks.scorers.gating_scorers``) plus ``expectations.scorers``
and the policy's extra ``scorers``. The run of a case is
the experiment's most recent run linked to it. The verdict rules live in
``checks.verdict``; this module gathers the evidence and writes the record.

Small datasets are evaluated in the request; above ``GATE_SYNC_MAX_CASES`` active cases
(or, when the policy names judge criteria, above the runs a request can judge:
``R // (T x J)``) the request answers at once with the gate run (202) and a worker
evaluates it.
"""

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from checks.scorers import gating_scorers
from checks.verdict import Check, case_decide, gate_decide, ratcheted_floor
from datasets.case_selectors import dataset_get
from datasets.experiments import experiment_get
from datasets.models import CaseStatus, GoldenCase, Trace
from evalsite.errors import Invalid
from experiments.comparison import experiments_compare
from experiments.models import GateRun
from experiments.policies import baseline_record, policy_for
from scoring.catalog import catalog_for, judge_sync_cap
from scoring.outcomes import outcomes_ensure


def gate_request(
    *, project, dataset_name, experiment_name, baseline_name=None, set_baseline=False, key=None, user=None
):
    """Start a gate run; evaluate it now for a small dataset, else hand it to a worker.

    Returns the GateRun: ``done`` (or ``failed``) when evaluated in the request,
    ``running`` when a worker will finish it (poll ``GET /v1/api/gate-runs/{id}``).
    """
    dataset = dataset_get(project=project, name=dataset_name)
    experiment = experiment_get(project=project, name=experiment_name)
    baseline = experiment_get(project=project, name=baseline_name, field="baseline") if baseline_name else None
    if baseline is not None and baseline.pk == experiment.pk:
        raise Invalid(
            "The baseline must be another experiment.",
            errors=[{"field": "baseline", "message": "is the experiment itself"}],
        )
    gate_run = GateRun.objects.create(
        project=project, dataset=dataset, experiment=experiment, baseline=baseline, set_baseline=set_baseline,
        requested_by_key=key, requested_by=user,
    )  # fmt: skip
    active = GoldenCase.objects.filter(dataset=dataset, status=CaseStatus.ACTIVE).count()
    if active > _sync_max_cases(project, dataset):
        from experiments.tasks import gate_evaluate_task

        transaction.on_commit(lambda: gate_evaluate_task.delay(gate_run.pk))
        return gate_run
    return gate_evaluate(gate_run_id=gate_run.pk)


def _sync_max_cases(project, dataset):
    """Cases a gate evaluates in the request: fewer when its policy names judge criteria (R // (T x J))."""
    cap = settings.EVALSITE_GATE_SYNC_MAX_CASES
    catalog = catalog_for(project)
    judged = catalog.judged(policy_for(dataset).scorers)
    if judged:
        cap = min(cap, judge_sync_cap(catalog.judge, len(judged)))
    return cap


def gate_evaluate(*, gate_run_id):
    """Evaluate a running gate run and record its verdict; idempotent.

    A run already ``done`` or ``failed`` is returned as it is. An error marks it
    ``failed`` with the error text (and re-raises), so a client polling it stops.
    """
    gate_run = GateRun.objects.select_related("project", "dataset", "experiment", "baseline").get(pk=gate_run_id)
    if gate_run.status != GateRun.Status.RUNNING:
        return gate_run
    try:
        answer, case_versions, verdict, policy = _evaluate(gate_run)
    except Exception as exc:
        GateRun.objects.filter(pk=gate_run.pk, status=GateRun.Status.RUNNING).update(
            status=GateRun.Status.FAILED, error=f"{type(exc).__name__}: {exc}"[:2000], finished_at=timezone.now()
        )
        raise
    recorded = {
        "status": GateRun.Status.DONE,
        "verdict": verdict.verdict,
        "pass_rate": verdict.pass_rate,
        "floor": answer["floor"],
        "passed_cases": verdict.passed_cases,
        "total_cases": verdict.total_cases,
        "unmeasured_cases": verdict.unmeasured_cases,
        "baseline_pass_rate": answer["baseline"]["pass_rate"] if answer["baseline"] else None,
        "result": answer,
        "case_versions": case_versions,
        "finished_at": timezone.now(),
    }
    with transaction.atomic():
        updated = GateRun.objects.filter(pk=gate_run.pk, status=GateRun.Status.RUNNING).update(**recorded)
        if updated and gate_run.set_baseline and verdict.passed:
            new_floor = ratcheted_floor(
                floor=policy.min_pass_rate, ratchet=policy.ratchet, verdict=verdict, set_baseline=True
            )
            baseline_record(
                dataset=gate_run.dataset, experiment=gate_run.experiment, gate_run=gate_run, ratchet_to=new_floor
            )
    if updated:
        # What was just written: reading the answer back would cost as much as writing it.
        for name, value in recorded.items():
            setattr(gate_run, name, value)
    else:
        gate_run.refresh_from_db()  # another evaluation finished it first
    return gate_run


def _evaluate(gate_run):
    dataset, experiment = gate_run.dataset, gate_run.experiment
    policy = policy_for(dataset)
    baseline = gate_run.baseline or policy.baseline
    if baseline is not None and baseline.pk == experiment.pk:
        baseline = None
    cases = list(
        GoldenCase.objects.filter(dataset=dataset, status=CaseStatus.ACTIVE)
        .order_by("id")
        .values("id", "name", "version", "expected_output", "expectations")
    )
    runs = _latest_runs(experiment, [c["id"] for c in cases])
    scorers_by_case = {c["id"]: gating_scorers(c["expectations"], policy.scorers) for c in cases}
    outcomes, tools = outcomes_ensure(
        project=gate_run.project,
        trace_pks={case_id: run["id"] for case_id, run in runs.items()},
        scorers_by_case=scorers_by_case,
    )
    case_results, case_verdicts = [], []
    for case in cases:
        run = runs.get(case["id"])
        checks = (
            [_check(scorer, outcomes.get((run["id"], scorer))) for scorer in scorers_by_case[case["id"]]] if run else []
        )
        verdict = case_decide(checks, has_run=run is not None)
        case_verdicts.append(verdict)
        case_results.append(_case_result(case, run, checks, verdict, tools.get(run["id"], []) if run else []))

    gating = sorted({s for ids in scorers_by_case.values() for s in ids})
    comparison = (
        experiments_compare(base=baseline, candidate=experiment, scorers=gating, tolerance=policy.tolerance)
        if baseline
        else None
    )
    regressed = [row["scorer"] for row in comparison["scorers"] if row["regressed"]] if comparison else []
    verdict = gate_decide(
        case_verdicts,
        floor=policy.min_pass_rate,
        max_abstained=policy.max_abstained,
        regressed_scorers=regressed,
        fail_on_regression=policy.fail_on_regression,
    )
    baseline_rate = _baseline_pass_rate(baseline, dataset) if baseline else None
    answer = {
        "gate_run_id": gate_run.pk,
        "status": GateRun.Status.DONE,
        "dataset": dataset.name,
        "experiment": experiment.name,
        "verdict": verdict.verdict,
        "passed": verdict.passed,
        "passed_cases": verdict.passed_cases,
        "total_cases": verdict.total_cases,
        "measured_cases": verdict.measured_cases,
        "unmeasured_cases": verdict.unmeasured_cases,
        "pass_rate": verdict.pass_rate,
        "floor": policy.min_pass_rate,
        "max_abstained": policy.max_abstained,
        "baseline": {"experiment": baseline.name, "pass_rate": baseline_rate} if baseline else None,
        "delta": verdict.pass_rate - baseline_rate
        if baseline_rate is not None and verdict.pass_rate is not None
        else None,
        "blocked_by": verdict.blocked_by,
        "comparison": comparison["scorers"] if comparison else [],
        "flipped": comparison["flipped"] if comparison else None,
        "cases": case_results,
    }
    case_versions = {str(c["id"]): c["version"] for c in cases}
    return answer, case_versions, verdict, policy


def _latest_runs(experiment, case_ids):
    """``{case_id: run values}``: the experiment's most recent run of each case."""
    latest = {}
    runs = (
        Trace.objects.filter(experiment=experiment, case_id__in=case_ids)
        .order_by("case_id", "-started_at", "-id")
        .values("id", "trace_id", "case_id", "latency_ms", "cost_cents")
    )
    for run in runs.iterator(chunk_size=2000):
        latest.setdefault(run["case_id"], run)
    return latest


def _check(scorer, outcome):
    if outcome is None:
        return Check(scorer, "abstained", "not_scored", {"message": "no score was recorded"})
    return Check(scorer, outcome["status"], outcome["reason"], outcome["detail"])


def _case_result(case, run, checks, verdict, actual_tools):
    by_scorer = {c.scorer: c for c in checks}
    choice = by_scorer.get("tool_choice")
    schema = by_scorer.get("tool_output_schema")
    output = by_scorer.get("tool_output")
    cost = by_scorer.get("cost_budget")
    latency = by_scorer.get("latency_budget")
    return {
        "name": case["name"],
        "case_id": case["id"],
        "case_version": case["version"],
        "trace_id": run["trace_id"] if run else None,
        "passed": verdict.passed,
        "measured": verdict.measured,
        "actual_tools": (
            choice.detail.get("actual_tools") if choice and "actual_tools" in choice.detail else actual_tools
        ),
        "tool_choice_ok": not (choice and choice.status == "failed"),
        "schema_errors": _schema_errors(schema),
        "schema_checked": bool(schema and schema.status in ("passed", "failed")),
        "output_errors": _output_errors(output),
        "output_checked": bool(output and output.status in ("passed", "failed")),
        "cost_cents": float(run["cost_cents"]) if run and run["cost_cents"] is not None else None,
        "cost_ok": not (cost and cost.status == "failed"),
        "latency_ms": run["latency_ms"] if run else None,
        "latency_ok": not (latency and latency.status == "failed"),
        "checks": [c.as_dict() for c in checks],
        "failed_checks": verdict.failed_checks,
        "reasons": verdict.reasons,
    }


def _schema_errors(check):
    if not check or check.status != "failed":
        return []
    return [
        e["message"] if e.get("path", "$") == "$" else f"{e['path']}: {e['message']}"
        for e in check.detail.get("errors", [])
    ]


def _output_errors(check):
    if not check or check.status != "failed":
        return []
    lines = []
    for m in check.detail.get("mismatches", []):
        if m.get("missing"):
            lines.append(f"{m['field']}: missing, expected {m['expected']!r}")
        else:
            lines.append(f"{m['field']}: expected {m['expected']!r}, got {m['actual']!r}")
    return lines


def _baseline_pass_rate(baseline, dataset):
    """The pass rate of the baseline's latest finished gate run on this dataset, if any."""
    gate_run = (
        GateRun.objects.filter(experiment=baseline, dataset=dataset, status=GateRun.Status.DONE)
        .exclude(pass_rate=None)
        .order_by("-created_at", "-id")
        .first()
    )
    return gate_run.pass_rate if gate_run else None
