"""The gate: score what is missing for an experiment's runs of a dataset's active cases,
decide PASS or FAIL, and keep the verdict as a GateRun with one GateCase per case.

Which checks gate a case: the expectations it has (each turns on the check whose
``gated_by`` names it, ``checks.scorers.gating_scorers``) plus ``expectations.scorers``
and the policy's extra ``scorers``. A case's trials are all its runs in the experiment
(``gating.gate_runs``). A run whose input does not hold its case's is listed under
``input_mismatches`` unless the policy's ``input_match`` is ``off``; under ``require`` it
is also unmeasured. The verdict rules live in ``checks.verdict``; the answer's
shape in ``gating.gate_answer``; this module gathers the evidence and records it.

Small gates are evaluated in the request. A gate goes to a worker (202, poll the gate
run) when its dataset has more than ``EVALSITE_GATE_SYNC_MAX_CASES`` active cases, or
when it would call a judge on more runs than a request can judge (``R // (T x J)``,
counting every criterion the gate would call: the policy's and those the cases name),
decided before any model is called. A worker holds the gate run by a lease
(``gating.gate_worker``): one killed mid-gate is replaced, with the same verdict.
"""

from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from checks.scorers import gating_scorers
from checks.verdict import Check, case_decide, gate_decide, ratcheted_floor, trials_decide
from datasets.case_selectors import dataset_get
from datasets.experiments import experiment_get
from datasets.models import Trace
from evalsite.background import TRANSIENT_ERRORS
from evalsite.broker import send_or_leave_to_sweeper
from evalsite.bulk import db_json, rows_insert
from evalsite.errors import Invalid
from evalsite.metrics import GATE_VERDICTS, counted_on_commit
from gating.bar import bar_moves, bar_since
from gating.comparison import experiments_compare
from gating.gate_answer import case_answer, retried_trials, verdict_figures
from gating.gate_runs import CaseTrialRuns, active_cases, inputs_differing, trials_of_cases
from gating.gate_worker import gate_claim, holder_name, lease_kept
from gating.models import GateCase, GateRun
from gating.policies import baseline_record, floor_initialisable, policy_for
from scoring.judge.calibration import advisory_reason, agreement
from scoring.pipeline.loading import tool_names
from scoring.selection.catalog import catalog_for, judge_sync_cap
from scoring.selection.outcomes import outcomes_ensure

# An evaluation in the request holds its gate run this much longer than the request may last.
_REQUEST_HOLD_MARGIN_SECONDS = 60


def gate_request(
    *, project, dataset_name, experiment_name, baseline_name=None, set_baseline=False, init_floor=False,
    key=None, user=None, queue=None,
):  # fmt: skip
    """Start a gate run; evaluate it now for a small gate, else hand it to a worker.

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
    if init_floor and not set_baseline:
        raise Invalid(
            "init_floor sets the floor where a baseline stands: ask with set_baseline too.",
            errors=[{"field": "init_floor", "message": "needs set_baseline: true"}],
        )
    gate_run = GateRun.objects.create(
        project=project, dataset=dataset, experiment=experiment, baseline=baseline, set_baseline=set_baseline,
        init_floor=init_floor, requested_by_key=key, requested_by=user, queue=queue or "",
    )  # fmt: skip
    if _needs_worker(project, dataset, experiment):
        # The broker may be away: the gate run stays running and the sweeper sends it later.
        transaction.on_commit(
            lambda: send_or_leave_to_sweeper(lambda: gate_send(gate_run), what=f"gate run {gate_run.pk}")
        )
        return gate_run
    hold = timedelta(seconds=settings.EVALSITE_REQUEST_TIMEOUT_SECONDS + _REQUEST_HOLD_MARGIN_SECONDS)
    return gate_evaluate(gate_run_id=gate_run.pk, holder=holder_name("request"), hold=hold)


def gate_send(gate_run):
    """Enqueue the evaluation of ``gate_run`` on its queue."""
    from gating.tasks import gate_evaluate_task

    gate_evaluate_task.apply_async((gate_run.pk,), queue=gate_run.queue or None)


def _needs_worker(project, dataset, experiment):
    """Whether the gate is too large for the request (see the module docstring)."""
    cases = [case["expectations"] for case in active_cases(dataset)]
    if len(cases) > settings.EVALSITE_GATE_SYNC_MAX_CASES:
        return True
    policy = policy_for(dataset)
    catalog = catalog_for(project)
    named = {scorer for expectations in cases for scorer in gating_scorers(expectations, policy.scorers)}
    criteria = catalog.judged(sorted(named))
    if not criteria:
        return False
    runs = Trace.objects.filter(experiment=experiment, case__dataset=dataset, case__status="active").count()
    return runs > judge_sync_cap(catalog.judge, len(criteria))


def gate_evaluate(*, gate_run_id, holder=None, hold=None):
    """Evaluate a running gate run and record its verdict; idempotent.

    A gate run already ``done`` or ``failed``, or held by another live evaluator, is
    returned as it stands now. A worker (``hold`` None) renews its lease while it works. An
    error marks the gate run ``failed`` with the error text (and re-raises), so a
    client polling it stops; transient database errors are left to the task's retry.
    """
    holder = holder or holder_name()
    gate_run = GateRun.objects.select_related("project", "dataset", "experiment", "baseline").get(pk=gate_run_id)
    if gate_run.status != GateRun.Status.RUNNING:
        return gate_run
    if not gate_claim(gate_run.pk, holder, hold=hold):
        gate_run.refresh_from_db()  # held by another, or finished since it was read
        return gate_run
    try:
        if hold is None:
            with lease_kept(gate_run.pk, holder):
                return _evaluate(gate_run)
        return _evaluate(gate_run)
    except Exception as exc:
        if not isinstance(exc, TRANSIENT_ERRORS):
            GateRun.objects.filter(pk=gate_run.pk, status=GateRun.Status.RUNNING).update(
                status=GateRun.Status.FAILED, error=f"{type(exc).__name__}: {exc}"[:2000], finished_at=timezone.now()
            )
        raise


def _evaluate(gate_run):
    """Gather the evidence (scoring what is missing), then decide and record every case."""
    dataset, experiment = gate_run.dataset, gate_run.experiment
    policy = policy_for(dataset)
    baseline = gate_run.baseline or policy.baseline
    if baseline is not None and baseline.pk == experiment.pk:
        baseline = None
    cases = active_cases(dataset)
    trials = trials_of_cases(experiment, dataset, [c["id"] for c in cases])
    scorers = {c["id"]: gating_scorers(c["expectations"], policy.scorers) for c in cases}
    advisory = _advisory(gate_run.project, policy, scorers)
    outcomes, _ = outcomes_ensure(
        project=gate_run.project,
        scorers_by_run={
            run["id"]: scorers[case_id] for case_id, t in trials.items() for _, run in (*t.trials, *t.superseded_runs)
        },
        tools=False,
    )
    tools = tool_names(_tools_wanted(trials, scorers, advisory, outcomes))
    differing = inputs_differing(experiment, dataset) if policy.input_match != "off" else set()
    gating = sorted({s for ids in scorers.values() for s in ids} - set(advisory))
    comparison = (
        experiments_compare(base=baseline, candidate=experiment, scorers=gating, tolerance=policy.tolerance)
        if baseline
        else None
    )
    evidence = Evidence(outcomes, tools, advisory, differing if policy.input_match == "require" else set())
    return _record(gate_run, Gathered(policy, baseline, cases, trials, scorers, evidence, differing, comparison))


@dataclass
class Gathered:
    """Everything the gate read before deciding its cases."""

    policy: object
    baseline: object
    cases: list
    trials: dict
    scorers: dict  # case id: the scorer ids it is gated on
    evidence: object
    differing: set  # the runs whose input differs from their case's
    comparison: dict | None


class _Decided:
    """The cases decided one by one as their rows are written (``_record``)."""

    def __init__(self, gate_run, gathered):
        self.gate_run, self.gathered = gate_run, gathered
        self.rows, self.decided, self.mismatches = [], [], []

    def __iter__(self):
        g = self.gathered
        for position, case in enumerate(g.cases):
            runs = g.trials.get(case["id"], CaseTrialRuns())
            result, case_trials = _case_result(case, runs, g.scorers[case["id"]], g.evidence, g.policy)
            row = _row(self.gate_run.pk, position, case, result, case_trials)
            self.rows.append(row)
            if not case["quarantined"]:
                self.decided.append(case_trials)
                self.mismatches += [
                    {"case": case["name"], "trace_id": r["trace_id"]} for _, r in runs.trials if r["id"] in g.differing
                ]
            yield row

    def answer(self, verdict):
        gate_run, g = self.gate_run, self.gathered
        answer = _answer(gate_run, verdict, g.policy, g.baseline, g.comparison, self.rows)
        answer["advisory"] = sorted(g.evidence.advisory.values())
        moves, more = bar_moves(g.policy, gate_run.dataset, bar_since(g.policy, gate_run.dataset, gate_run))
        answer.update(policy_revision=g.policy.revision, bar_moved=moves, bar_moved_more=more)
        answer["input_match"] = g.policy.input_match
        answer["input_mismatches"] = self.mismatches
        return answer


@dataclass
class Evidence:
    """What the gate gathered about every run: scores, tool names, advisory criteria, and the runs
    whose input differs from their case's when the policy requires it to match."""

    outcomes: dict
    tools: dict
    advisory: dict
    input_required: set


def _case_result(case, runs, scorer_ids, evidence, policy):
    """``(the case's answer, its CaseTrials)``: each trial's checks decided, then the case over its trials.

    Checks of an advisory criterion are reported with the case but left out of its verdict.
    """
    outcomes, tools, advisory = evidence.outcomes, evidence.tools, evidence.advisory
    gating = [s for s in scorer_ids if s not in advisory]
    trial_checks = [[_check(s, outcomes.get((run["id"], s))) for s in gating] for _, run in runs.trials]
    trial_verdicts = [
        case_decide(checks, input_differs=run["id"] in evidence.input_required)
        for checks, (_, run) in zip(trial_checks, runs.trials, strict=True)
    ]
    earlier = [
        case_decide(
            [_check(s, outcomes.get((run["id"], s))) for s in gating],
            input_differs=run["id"] in evidence.input_required,
        )
        for _, run in runs.superseded_runs
    ]
    decided = trials_decide(trial_verdicts, required=policy.trials, pass_ratio=policy.trial_pass_ratio, earlier=earlier)
    result = case_answer(case, runs, trial_checks, trial_verdicts, decided, tools)
    result["retried"] = retried_trials(runs, trial_verdicts, earlier)
    shown = runs.trials[decided.shown][1] if decided.shown is not None else None
    result["advisory_checks"] = [
        _check(s, outcomes.get((shown["id"], s))).as_dict() for s in scorer_ids if s in advisory and shown
    ]
    return result, decided


def _tools_wanted(trials, scorers, advisory, outcomes):
    """The runs whose ``actual_tools`` comes from their tool spans (``gate_answer``): those
    with no gating ``tool_choice`` check, or one whose detail does not list the tools called.
    The others' tool spans are not read."""
    wanted = []
    for case_id, runs in trials.items():
        gated = "tool_choice" in scorers[case_id] and "tool_choice" not in advisory
        for _, run in runs.trials:
            outcome = outcomes.get((run["id"], "tool_choice")) if gated else None
            if outcome is None or "actual_tools" not in outcome["detail"]:
                wanted.append(run["id"])
    return wanted


def _advisory(project, policy, scorers):
    """``{criterion: reason}`` of the judge criteria that may not gate: with ``judge_min_kappa`` set,
    those whose agreement with reviewers is below it or rests on fewer than ``judge_min_labels`` labels."""
    if policy.judge_min_kappa is None:
        return {}
    criteria = catalog_for(project).judged(sorted({s for ids in scorers.values() for s in ids}))
    found = {}
    for criterion in criteria:
        reason = advisory_reason(
            agreement(project=project, criterion=criterion.id),
            min_kappa=policy.judge_min_kappa,
            min_labels=policy.judge_min_labels,
        )
        if reason:
            found[criterion.id] = reason
    return found


@dataclass(slots=True)
class CaseRow:
    """A GateCase row to insert: a plain object (a model instance costs ~50 µs to build, 10,000 of them a gate)."""

    gate_run_id: int
    position: int
    case_id: int
    name: str
    passed: bool
    measured: bool
    flaky: bool
    quarantined: bool
    result: dict


def _row(gate_run_id, position, case, result, decided):
    return CaseRow(
        gate_run_id=gate_run_id, position=position, case_id=case["id"], name=case["name"], passed=decided.passed,
        measured=decided.measured, flaky=decided.flaky, quarantined=case["quarantined"], result=result,
    )  # fmt: skip


def _answer(gate_run, verdict, policy, baseline, comparison, rows):
    """The answer without its per-case results (they are the rows)."""
    baseline_rate = _baseline_pass_rate(baseline, gate_run.dataset) if baseline else None
    gating = [row for row in rows if not row.quarantined]
    return {
        "gate_run_id": gate_run.pk,
        "status": GateRun.Status.DONE,
        "dataset": gate_run.dataset.name,
        "experiment": gate_run.experiment.name,
        **verdict_figures(verdict, policy),
        "flaky": [row.name for row in gating if row.flaky],
        "quarantined_cases": len(rows) - len(gating),
        "unchecked_answers": [row.name for row in gating if not row.result["answer_checked"]],
        "retried": [{"case": row.name, **retry} for row in gating for retry in row.result["retried"]],
        "baseline": {"experiment": baseline.name, "pass_rate": baseline_rate} if baseline else None,
        "delta": verdict.pass_rate - baseline_rate
        if baseline_rate is not None and verdict.pass_rate is not None
        else None,
        "comparison": comparison["scorers"] if comparison else [],
        "flipped": comparison["flipped"] if comparison else None,
    }


def _check(scorer, outcome):
    if outcome is None:
        return Check(scorer, "abstained", "not_scored", {"message": "no score was recorded"})
    return Check(scorer, outcome["status"], outcome["reason"], outcome["detail"])


def _record(gate_run, gathered):
    """Decide the cases and write them, the verdict and the baseline's move once (the first
    evaluation to finish wins).

    The cases are written as they are decided, in one COPY the database works through
    meanwhile. The gate run's row is locked first: another evaluation that got this far
    waits, then finds it finished; a lease renewal waits too, then stops.
    """
    policy = gathered.policy
    with transaction.atomic():
        if not GateRun.objects.select_for_update().filter(pk=gate_run.pk, status=GateRun.Status.RUNNING).exists():
            gate_run.refresh_from_db()  # another evaluation finished it first
            return gate_run
        cases = _Decided(gate_run, gathered)
        _cases_insert(cases)
        comparison = gathered.comparison
        regressed = [row["scorer"] for row in comparison["scorers"] if row["regressed"]] if comparison else []
        verdict = gate_decide(
            cases.decided, floor=policy.min_pass_rate, max_abstained=policy.max_abstained,
            regressed_scorers=regressed, fail_on_regression=policy.fail_on_regression, max_flaky=policy.max_flaky,
            k=policy.trials,
        )  # fmt: skip
        answer = cases.answer(verdict)
        recorded = {
            "status": GateRun.Status.DONE,
            "verdict": verdict.verdict,
            "pass_rate": verdict.pass_rate,
            "floor": answer["floor"],
            "passed_cases": verdict.passed_cases,
            "total_cases": verdict.total_cases,
            "unmeasured_cases": verdict.unmeasured_cases,
            "baseline_pass_rate": answer["baseline"]["pass_rate"] if answer["baseline"] else None,
            "case_versions": {str(c["id"]): c["version"] for c in gathered.cases},
            "finished_at": timezone.now(),
            "lease_until": None,
        }
        answer.update(_baseline_move(gate_run, verdict, policy))
        GateRun.objects.filter(pk=gate_run.pk).update(**recorded, result=answer)
        counted_on_commit(GATE_VERDICTS, project=gate_run.project.slug, verdict=verdict.verdict)
    # What was just written: reading the answer back would cost as much as writing it.
    for name, value in {**recorded, "result": answer}.items():
        setattr(gate_run, name, value)
    gate_run.case_rows = cases.rows
    return gate_run


def _cases_insert(rows):
    """The gate run's case rows (an iterable, written as it yields) in one COPY (``bulk_create`` quotes
    each JSON result client-side)."""
    columns = ("gate_run_id", "position", "case_id", "name", "passed", "measured", "flaky", "quarantined", "result")
    rows_insert(
        GateCase._meta.db_table,
        columns,
        (
            (r.gate_run_id, r.position, r.case_id, r.name, r.passed, r.measured, r.flaky, r.quarantined,
             db_json(r.result))
            for r in rows
        ),
    )  # fmt: skip


def _baseline_move(gate_run, verdict, policy):
    """Record the baseline when asked: a PASS ratchets the floor up; with ``init_floor`` on a
    dataset with no baseline yet, the run becomes the baseline pass or fail and the floor
    starts at its pass rate (seed 003). Returns what happened, for the answer."""
    if not gate_run.set_baseline:
        return {"baseline_recorded": False, "floor_initialised": False}
    if gate_run.init_floor and floor_initialisable(policy) and verdict.pass_rate is not None:
        baseline_record(
            dataset=gate_run.dataset, experiment=gate_run.experiment, gate_run=gate_run,
            floor_to=verdict.pass_rate, initial=True,
        )  # fmt: skip
        return {"baseline_recorded": True, "floor_initialised": True}
    if not verdict.passed:
        return {"baseline_recorded": False, "floor_initialised": False}
    new_floor = ratcheted_floor(floor=policy.min_pass_rate, ratchet=policy.ratchet, verdict=verdict, set_baseline=True)
    baseline_record(dataset=gate_run.dataset, experiment=gate_run.experiment, gate_run=gate_run, floor_to=new_floor)
    return {"baseline_recorded": True, "floor_initialised": False}


def _baseline_pass_rate(baseline, dataset):
    """The pass rate of the baseline's latest finished gate run on this dataset, if any."""
    gate_run = (
        GateRun.objects.filter(experiment=baseline, dataset=dataset, status=GateRun.Status.DONE)
        .exclude(pass_rate=None)
        .order_by("-created_at", "-id")
        .first()
    )
    return gate_run.pass_rate if gate_run else None
