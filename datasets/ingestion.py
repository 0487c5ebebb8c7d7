"""Ingest runs: one run or a batch, validated whole and written in one transaction.

Order of answers: an invalid item (400, every error listed) is reported before a
``trace_id`` that exists with other content (409), which is reported before the quota
(429). In each case nothing is written, experiments created on the way included.
A ``trace_id`` that exists with the same content is a no-op success: clients retry.
"""

from dataclasses import dataclass

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from datasets.experiments import experiments_ensure
from datasets.models import Dataset, GoldenCase, Span, Trace, TraceSource
from datasets.run_validation import field_name, runs_validate
from evalsite.bulk import datetime_adapter, db_decimal, db_json, ids_allocate, rows_insert
from evalsite.errors import Conflict, Invalid
from evalsite.metrics import RUNS_INGESTED, counted_on_commit
from evalsite.quota import quota_reserve

TRACE_COLUMNS = (
    "id", "project_id", "trace_id", "name", "input", "output", "status", "error", "started_at", "ended_at",
    "latency_ms", "cost_cents", "metadata", "tags", "experiment_id", "case_id", "trial", "source", "content_hash",
    "ingested_at", "session_id", "user_id", "conversation_id",
)  # fmt: skip
SPAN_COLUMNS = (
    "trace_id", "span_id", "parent_span_id", "position", "kind", "name", "input", "output", "status", "error",
    "started_at", "ended_at", "latency_ms", "cost_cents", "model", "usage", "attributes",
)  # fmt: skip


@dataclass
class IngestResult:
    created: list
    unchanged: list

    def as_dict(self):
        return {
            "created": len(self.created),
            "unchanged": len(self.unchanged),
            "traces": [{"trace_id": t, "status": "created"} for t in self.created]
            + [{"trace_id": t, "status": "unchanged"} for t in self.unchanged],
        }


def traces_ingest(*, project, payload):
    """Validate and write the runs of one request; returns an ``IngestResult``.

    Atomic: all new runs and their spans are written, or none. Runs already stored
    with identical content are reported ``unchanged`` and not rewritten. Raises
    ``Invalid`` (400), ``Conflict`` (409) or ``QuotaExceeded`` (429), writing nothing.
    If a concurrent request writes one of the same ``trace_id``s first, the whole
    request is retried once and then sees those runs as stored.
    """
    runs, _ = runs_validate(payload, max_batch=settings.EVALSITE_MAX_BATCH)
    for attempt in range(2):
        try:
            with transaction.atomic():
                return _runs_write(project, runs)
        except IntegrityError:
            if attempt:
                raise Conflict("Another request wrote the same trace_ids at the same time; retry.") from None
    raise AssertionError("unreachable")


def _runs_write(project, runs):
    experiments, cases = _references_resolve(project, runs)
    stored = dict(
        Trace.objects.filter(project=project, trace_id__in=[r.trace_id for r in runs]).values_list(
            "trace_id", "content_hash"
        )
    )
    conflicts = [
        {"field": _field(r, "trace_id"), "message": f"trace_id {r.trace_id!r} is already stored with different content"}
        for r in runs
        if r.trace_id in stored and stored[r.trace_id] != r.content_hash
    ]
    if conflicts:
        raise Conflict("Some runs are already stored with different content; nothing was written.", errors=conflicts)
    new_runs = [r for r in runs if r.trace_id not in stored]
    quota_reserve(project=project, count=len(new_runs))

    now = timezone.now()
    db_datetime = datetime_adapter()
    ids = ids_allocate(Trace, len(new_runs))
    trace_rows = []
    span_rows = []
    for pk, run in zip(ids, new_runs, strict=True):
        experiment = experiments.get(run.experiment)
        case_pk = cases.get(run.index)
        trace_rows.append((
            pk, project.pk, run.trace_id, run.name, db_json(run.input), db_json(run.output), run.status, run.error,
            db_datetime(run.started_at or now), db_datetime(run.ended_at), run.latency_ms,
            db_decimal(run.cost_cents), db_json(run.metadata), db_json(run.tags),
            experiment.pk if experiment else None, case_pk, run.trial, TraceSource.API,
            run.content_hash,
            db_datetime(now), run.session_id, run.user_id, run.conversation_id,
        ))  # fmt: skip
        for s in run.spans:
            span_rows.append((
                pk, s.span_id, s.parent_span_id, s.position, s.kind, s.name, db_json(s.input), db_json(s.output),
                s.status, s.error, db_datetime(s.started_at), db_datetime(s.ended_at), s.latency_ms,
                db_decimal(s.cost_cents), s.model, db_json(s.usage), db_json(s.attributes),
            ))  # fmt: skip
    rows_insert(Trace._meta.db_table, TRACE_COLUMNS, trace_rows)
    rows_insert(Span._meta.db_table, SPAN_COLUMNS, span_rows)
    counted_on_commit(RUNS_INGESTED, len(new_runs), project=project.slug)
    return IngestResult(
        created=[r.trace_id for r in new_runs],
        unchanged=[r.trace_id for r in runs if r.trace_id in stored],
    )


def _references_resolve(project, runs):
    """Experiments (created if new) and the golden case id of each run; ``Invalid`` for unknown names.

    Cases are looked up by the ids and names the runs give, reading only their ids:
    a request costs the same whatever the size of the golden set.
    """
    errors = []
    dataset_names = {r.dataset for r in runs if r.dataset}
    datasets = {d.name: d for d in Dataset.objects.filter(project=project, name__in=dataset_names)}
    for run in runs:
        if run.dataset and run.dataset not in datasets:
            errors.append(
                {"field": _field(run, "dataset"), "message": f"no dataset named {run.dataset!r} in this project"}
            )

    wanted = {}
    for run in runs:
        if run.experiment and wanted.get(run.experiment) is None:
            wanted[run.experiment] = datasets.get(run.dataset)
    experiments = experiments_ensure(project=project, datasets_by_name=wanted) if not errors else {}

    cases = {}
    by_id = [r for r in runs if isinstance(r.case, int)]
    by_name = {}
    for run in runs:
        if isinstance(run.case, str):
            dataset = datasets.get(run.dataset)
            if dataset is None and run.experiment in experiments:
                dataset = experiments[run.experiment].dataset
            if dataset is None:
                if not run.dataset:
                    errors.append(
                        {
                            "field": _field(run, "case"),
                            "message": "names a case by name; give 'dataset' too (or use an experiment that has one)",
                        }
                    )
                continue
            by_name[run.index] = (run, (dataset.pk, run.case))
    cases.update(_case_ids(project, by_id, by_name, errors))
    if errors:
        raise Invalid("Some runs name things that do not exist; nothing was written.", errors=errors)
    return experiments, cases


def _case_ids(project, by_id, by_name, errors):
    """``{run index: case pk}`` of the runs naming a case by id or by (dataset, name); unknown ones go to ``errors``."""
    cases = {}
    if by_id:
        found = set(
            GoldenCase.objects.filter(dataset__project=project, pk__in={r.case for r in by_id}).values_list(
                "pk", flat=True
            )
        )
        for run in by_id:
            if run.case in found:
                cases[run.index] = run.case
            else:
                errors.append({"field": _field(run, "case"), "message": f"no case {run.case} in this project"})
    if by_name:
        dataset_ids = {key[0] for _, key in by_name.values()}
        names = {key[1] for _, key in by_name.values()}
        found = {
            (dataset_id, name): pk
            for dataset_id, name, pk in GoldenCase.objects.filter(
                dataset_id__in=dataset_ids, name__in=names
            ).values_list("dataset_id", "name", "pk")
        }
        for run, key in by_name.values():
            if key in found:
                cases[run.index] = found[key]
            else:
                errors.append({"field": _field(run, "case"), "message": f"no case named {key[1]!r} in that dataset"})
    return cases


def _field(run, name):
    return field_name(run.where, name)
