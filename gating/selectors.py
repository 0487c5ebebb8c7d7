"""Reads of gate runs and of experiments' results, scoped to one project (another project's is not found)."""

from django.db.models import Avg, Case, Count, F, FloatField, OuterRef, Q, Subquery, When

from datasets.experiments import experiment_list
from evalsite.errors import NotFound
from gating.case_pages import answer_cases
from gating.models import GateCase, GatePolicy, GateRun
from scoring.freshness import scores_fresh
from scoring.models import Score


def gate_run_get(*, project, gate_run_id):
    gate_run = (
        GateRun.objects.select_related("dataset", "experiment", "baseline")
        .filter(project=project, pk=gate_run_id)
        .first()
    )
    if gate_run is None:
        raise NotFound(f"No gate run {gate_run_id} in this project.")
    return gate_run


def gate_run_list(*, project, dataset=None, experiment=None, verdict=None):
    runs = GateRun.objects.filter(project=project).select_related("dataset", "experiment", "baseline")
    if dataset:
        runs = runs.filter(dataset__name=dataset)
    if experiment:
        runs = runs.filter(experiment__name=experiment)
    if verdict:
        runs = runs.filter(verdict=verdict)
    return runs


def experiments_overview(*, project):
    """The project's experiments, oldest first, each with ``latest_gate`` (its last finished
    gate run), ``scores_n`` and ``pass_rate`` (share of its fresh scores that passed, all
    scorers pooled) and ``scorer_rates`` (``{scorer: {n, rate}}``, the same per scorer)."""
    experiments = list(experiment_list(project=project).order_by("created_at", "id"))
    rates = {
        row["experiment_id"]: row
        for row in scores_fresh(Score.objects.filter(experiment__in=[e.pk for e in experiments]))
        .values("experiment_id")
        .annotate(n=Count("id"), rate=Avg(Case(When(passed=True, then=1.0), default=0.0, output_field=FloatField())))
    }
    per_scorer = {}
    for row in (
        scores_fresh(Score.objects.filter(experiment__in=[e.pk for e in experiments]))
        .values("experiment_id", "scorer")
        .annotate(n=Count("id"), rate=Avg(Case(When(passed=True, then=1.0), default=0.0, output_field=FloatField())))
        .order_by("scorer")
    ):
        per_scorer.setdefault(row["experiment_id"], {})[row["scorer"]] = {"n": row["n"], "rate": row["rate"]}
    latest_gate = {}
    for gate_run in GateRun.objects.filter(project=project, status=GateRun.Status.DONE).order_by("created_at", "id"):
        latest_gate[gate_run.experiment_id] = gate_run
    for experiment in experiments:
        experiment.latest_gate = latest_gate.get(experiment.pk)
        experiment.scores_n = rates.get(experiment.pk, {}).get("n", 0)
        experiment.pass_rate = rates.get(experiment.pk, {}).get("rate")
        experiment.scorer_rates = per_scorer.get(experiment.pk, {})
    return experiments


# Fields a verdict recorded before they existed answers with: nothing was known to have moved.
VERDICT_DEFAULTS = {"policy_revision": None, "bar_moved": [], "bar_moved_more": 0}


def gate_run_answer(gate_run):
    """The gate's answer: its figures and one page of its cases (``gating.case_pages.answer_cases``:
    ``cases`` and ``quarantined``, failures first, each with a ``*_next`` cursor or None);
    or where a running or failed run stands."""
    if gate_run.status != GateRun.Status.DONE:
        answer = {
            "gate_run_id": gate_run.pk,
            "status": gate_run.status,
            "dataset": gate_run.dataset.name,
            "experiment": gate_run.experiment.name,
        }
        if gate_run.status == GateRun.Status.FAILED:
            answer["error"] = gate_run.error
        return answer
    return {**VERDICT_DEFAULTS, **gate_run.result, **answer_cases(gate_run, getattr(gate_run, "case_rows", None))}


# What a gate run's page can show: each a filter of its case rows.
GATE_CASE_FILTERS = {
    "failing": {"quarantined": False, "passed": False},
    "flaky": {"flaky": True},
    "quarantined": {"quarantined": True},
    "passed": {"quarantined": False, "passed": True},
    "all": {},
}


def gate_case_counts(*, gate_run):
    """``{filter name: number of case rows}`` for every filter of ``GATE_CASE_FILTERS``, in one query."""
    counted = GateCase.objects.filter(gate_run=gate_run).aggregate(
        **{f"n_{name}": Count("id", filter=Q(**rule)) for name, rule in GATE_CASE_FILTERS.items()}
    )
    return {name: counted[f"n_{name}"] or 0 for name in GATE_CASE_FILTERS}


def gate_cases_shown(*, gate_run, show="failing"):
    """A gate run's case rows under filter ``show``: failures first, unmeasured first among them."""
    rows = GateCase.objects.filter(gate_run=gate_run, **GATE_CASE_FILTERS[show])
    return rows.order_by("quarantined", "passed", "measured", "position").only("result", "quarantined", "flaky")


# What the compare page's paired cases can show.
PAIRED_CASE_FILTERS = ("changed", "flaky", "all")


# How the compare page can order the paired cases: the candidate's report, or the largest drop first.
PAIRED_CASE_ORDERS = ("report", "drop")


def paired_case_rows(*, base_gate_run_id, candidate_gate_run_id, show="changed", order="report"):
    """The candidate gate run's case rows, each with ``base_row_id``: the same case's row in the base run.

    ``changed``: the case's outcome differs (a case missing from the base counts as changed);
    ``flaky``: flaky on either side. Ordered as the candidate's report, or with ``order="drop"``
    by ``drop``, the base's outcome minus the candidate's (1: pass → fail, 0: the same or no
    base, -1: fail → pass), largest first, then as the report.
    """
    base = GateCase.objects.filter(gate_run_id=base_gate_run_id, case_id=OuterRef("case_id"))
    rows = GateCase.objects.filter(gate_run_id=candidate_gate_run_id, case__isnull=False).annotate(
        base_row_id=Subquery(base.values("pk")[:1]),
        base_passed=Subquery(base.values("passed")[:1]),
        base_flaky=Subquery(base.values("flaky")[:1]),
    )
    if show == "changed":
        rows = rows.filter(Q(base_row_id__isnull=True) | ~Q(base_passed=F("passed")))
    elif show == "flaky":
        rows = rows.filter(Q(flaky=True) | Q(base_flaky=True))
    rows = rows.only("result", "quarantined", "flaky", "passed", "measured")
    if order != "drop":
        return rows.order_by("position")
    drop = Case(When(base_passed=True, then=1), default=0) - Case(When(passed=True, then=1), default=0)
    drop = Case(When(base_row_id__isnull=True, then=0), default=drop)
    return rows.annotate(drop=drop).order_by("-drop", "position")


def gate_case_results(row_ids):
    """``{row id: result}`` of the given gate case rows (one query)."""
    return dict(GateCase.objects.filter(pk__in=[i for i in row_ids if i]).values_list("pk", "result"))


def gate_policy_list(*, project):
    """The gate policies of the project's datasets, each with its dataset."""
    return list(GatePolicy.objects.filter(dataset__project=project).select_related("dataset"))


def floor_changes_recent(*, policy, limit):
    """The ``limit`` newest floor changes of a stored ``policy`` (none for one never saved)."""
    return policy.floor_changes.all()[:limit] if policy.pk else []
