"""Capturing runs as cases without turning a wrong answer into the reference.

Taking a run's own answer as a case's expected answer (``use_output_as_expected``) is
refused for a run that failed a check: its answer is the failure the case is meant to
catch. The checks are those stored for the run (fresh built-in and judge scores) and,
run then and there on the run as the new case would see it (its answer as the expected
answer, the request's expectations), the case's deterministic checks, ``not_a_refusal``,
and the run's status (``error`` is a failure: ``status error``). One such run is a ``Conflict`` (409) naming its failed checks, unless the
request says ``accept_failed_output: true``. Several runs at once: the failing ones are
skipped (the answer says which, and why) and the others captured; with ``skip_failing``
(the runs list's bulk capture) even when that leaves none. The refusal is a
``FailedAsReference``, which names the runs and their checks for a page to word. The rest
of the rules are the capture's own (``datasets.capture``).
"""

from dataclasses import replace

from django.db import transaction

from checks.scorers import SCORERS, Result, gating_scorers, resolve_config, score_run
from datasets.capture import CAPTURE_REQUEST_SCHEMA, MAX_TRACES_PER_CAPTURE, cases_capture
from datasets.case_selectors import dataset_get
from datasets.case_validation import expectations_check
from datasets.cases import dataset_create
from datasets.models import Trace
from evalsite.errors import Conflict, DomainError, Invalid
from scoring.freshness import scores_fresh
from scoring.models import Score, ScoreSource
from scoring.pipeline.loading import runs_load

ACCEPT_FIELD = "accept_failed_output"
GUARDED_CAPTURE_SCHEMA = {
    **CAPTURE_REQUEST_SCHEMA,
    "properties": {
        **CAPTURE_REQUEST_SCHEMA["properties"],
        ACCEPT_FIELD: {
            "type": "boolean",
            "default": False,
            "description": "With use_output_as_expected: take the answer of a run that failed a check anyway.",
        },
    },
}


class FailedAsReference(Conflict):
    """The refusal of a run that failed a check as its own reference; ``failed`` is ``{trace_id: [checks]}``."""

    def __init__(self, detail, *, errors, failed):
        super().__init__(detail, errors=errors)
        self.failed = failed


def runs_failed_checks(*, project, trace_ids):
    """``{trace_id: [failed scorer ids]}`` of the runs among ``trace_ids`` with a failed, fresh score."""
    failed = {}
    rows = (
        scores_fresh(
            Score.objects.filter(
                project=project,
                trace__trace_id__in=list(trace_ids),
                passed=False,
                source__in=[ScoreSource.BUILTIN, ScoreSource.JUDGE],
            )
        )
        .values_list("trace__trace_id", "scorer")
        .order_by("trace__trace_id", "scorer")
    )
    for trace_id, scorer in rows:
        failed.setdefault(trace_id, [])
        if scorer not in failed[trace_id]:
            failed[trace_id].append(scorer)
    return failed


def runs_failing_as_reference(*, project, trace_ids, expectations):
    """``{trace_id: [failed checks]}``: the runs among ``trace_ids`` that fail, checked now, the deterministic
    checks a case made of them would gate on (its expectations, its answer as the expected answer), or
    ``not_a_refusal``, or have status ``error``. Judge criteria are left to their stored scores."""
    pks = list(Trace.objects.filter(project=project, trace_id__in=list(trace_ids)).values_list("id", flat=True))
    wanted = [s for s in gating_scorers(expectations) if s in SCORERS]
    wanted += [s for s in ("not_a_refusal",) if s not in wanted]
    failed = {}
    for loaded in runs_load(pks):
        run = replace(loaded.view, expected_output=loaded.view.output, expectations=expectations, has_case=True)
        found = ["status error"] if run.status == "error" else []
        for scorer_id in wanted:
            scorer = SCORERS[scorer_id]
            config = resolve_config(scorer, None, run)
            if config is None:
                continue
            outcome = score_run(scorer, run, config)
            if isinstance(outcome, Result) and not outcome.passed:
                found.append(scorer_id)
        if found:
            failed[run.trace_id] = found
    return failed


def _failures(project, trace_ids, data):
    expectations, problems = expectations_check(data.get("expectations") or {})
    stored = runs_failed_checks(project=project, trace_ids=trace_ids)
    if problems:
        return stored  # the capture refuses the expectations, naming them
    now = runs_failing_as_reference(project=project, trace_ids=trace_ids, expectations=expectations)
    return {t: list(dict.fromkeys([*stored.get(t, []), *now.get(t, [])])) for t in trace_ids if t in stored or t in now}


def cases_capture_guarded(*, dataset, data, by, max_runs=MAX_TRACES_PER_CAPTURE, skip_failing=False):
    """``(captured, skipped)``: ``datasets.capture.cases_capture`` with failing runs kept from becoming references.

    ``skipped`` is ``[{"trace_id", "failed_checks"}]`` of the runs left out. ``max_runs``
    is the capture's bound on the runs of one request (``cases_capture``). Without
    ``skip_failing``, a single failing run, or several that all fail, is a
    ``FailedAsReference``; with it they are skipped too (``captured`` may then be empty).
    """
    if not isinstance(data, dict):
        return cases_capture(dataset=dataset, data=data, by=by, max_runs=max_runs), []
    data = dict(data)
    accept = data.pop(ACCEPT_FIELD, False)
    if not isinstance(accept, bool):
        raise Invalid(
            "accept_failed_output must be true or false.",
            errors=[{"field": ACCEPT_FIELD, "message": "must be true or false"}],
        )
    trace_ids = data.get("trace_ids")
    if accept or data.get("use_output_as_expected") is not True or not isinstance(trace_ids, list):
        return cases_capture(dataset=dataset, data=data, by=by, max_runs=max_runs), []
    failed = _failures(dataset.project, list(dict.fromkeys(t for t in trace_ids if isinstance(t, str))), data)
    if not failed:
        return cases_capture(dataset=dataset, data=data, by=by, max_runs=max_runs), []
    everyone = len(set(trace_ids)) == 1 or all(t in failed for t in trace_ids)
    if everyone and not skip_failing:
        raise FailedAsReference(
            "A run that failed a check would become the reference of its own failure. Give its expected answer, "
            "or send accept_failed_output: true to take its answer anyway.",
            errors=[
                {"field": f"trace_ids[{i}]", "message": f"failed {', '.join(failed[t])}"}
                for i, t in enumerate(trace_ids)
                if t in failed
            ],
            failed=failed,
        )
    skipped = [{"trace_id": t, "failed_checks": failed[t]} for t in dict.fromkeys(trace_ids) if t in failed]
    data["trace_ids"] = [t for t in trace_ids if t not in failed]
    if not data["trace_ids"]:
        return [], skipped
    return cases_capture(dataset=dataset, data=data, by=by, max_runs=max_runs), skipped


def cases_capture_into(
    *, project, data, by, dataset_name=None, new_dataset_name=None, max_runs=MAX_TRACES_PER_CAPTURE, skip_failing=False
):
    """``(dataset, captured, skipped)``: ``cases_capture_guarded`` into a dataset, new or existing.

    With ``new_dataset_name`` the dataset is created first; its name's errors name the
    field ``new_dataset``. Else it is the project's dataset ``dataset_name`` (``NotFound``).
    One transaction: the new dataset and every new case are written, or nothing is (a new
    dataset is not kept when every run was skipped).
    """
    with transaction.atomic():
        if new_dataset_name:
            try:
                dataset = dataset_create(project=project, data={"name": new_dataset_name})
            except DomainError as exc:
                for item in exc.errors:
                    item["field"] = "new_dataset" if item.get("field") == "name" else item.get("field")
                raise
        else:
            dataset = dataset_get(project=project, name=dataset_name)
        captured, skipped = cases_capture_guarded(
            dataset=dataset, data=data, by=by, max_runs=max_runs, skip_failing=skip_failing
        )
        if new_dataset_name and not captured:
            transaction.set_rollback(True)
        return dataset, captured, skipped
