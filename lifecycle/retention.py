"""Retention: runs older than their project's ``retention_days`` are deleted, in bounded batches.

A run is old when it was ingested more than ``retention_days`` days ago (the time it
reached evalsite, not the client's ``started_at``: an import of last year's runs is
not deleted on arrival). Deleting a run deletes its spans, scores and abstentions
(the foreign keys cascade). Never deleted, whatever its age, a run that:

- is a golden case's source (``source_run``, or its ``trace_id`` is a case's
  ``source_trace_id`` in the project): the case must lead back to what motivated it;
- belongs to an experiment a gate run evaluated or compared against, or that a gate
  policy holds as its baseline: the gate's evidence is re-readable;
- carries a human label (a score with source ``human``): labels calibrate the judge.

``retention_sweep`` deletes at most ``batch_size`` runs per project per call, each
batch in its own transaction, so a sweep never holds long locks; the periodic task
calls it again until nothing is left. It lives here, at the top of the layers, because
the rules read datasets, scoring and experiments together.
"""

from dataclasses import dataclass
from datetime import timedelta

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from datasets.models import GoldenCase, Trace
from evalsite.models import Project
from gating.models import GatePolicy, GateRun
from scoring.models import Score, ScoreSource

DEFAULT_BATCH = 500


def _kept_rules(project):
    """``{reason: Q}`` over ``Trace``: the runs retention never deletes, by reason."""
    cases = GoldenCase.objects.filter(dataset__project=project)
    gated = set(GateRun.objects.filter(project=project).values_list("experiment_id", flat=True))
    gated |= set(GateRun.objects.filter(project=project, baseline__isnull=False).values_list("baseline_id", flat=True))
    gated |= set(
        GatePolicy.objects.filter(dataset__project=project, baseline__isnull=False).values_list(
            "baseline_id", flat=True
        )
    )
    return {
        "golden case source": Q(pk__in=cases.filter(source_run__isnull=False).values("source_run_id"))
        | Q(trace_id__in=cases.filter(source_trace_id__isnull=False).values("source_trace_id")),
        "gate evidence": Q(experiment_id__in=gated),
        "labelled": Q(pk__in=Score.objects.filter(project=project, source=ScoreSource.HUMAN).values("trace_id")),
    }


def _old(project, now):
    return Trace.objects.filter(project=project, ingested_at__lt=now - timedelta(days=project.retention_days))


def retention_batch(*, project, now=None, batch_size=DEFAULT_BATCH):
    """Delete up to ``batch_size`` of the project's expired runs; returns how many were deleted."""
    if not project.retention_days:
        return 0
    now = now or timezone.now()
    kept = Q()
    for rule in _kept_rules(project).values():
        kept |= rule
    with transaction.atomic():
        ids = list(_old(project, now).exclude(kept).order_by("pk").values_list("pk", flat=True)[:batch_size])
        if ids:
            Trace.objects.filter(pk__in=ids).delete()
    return len(ids)


def retention_sweep(*, now=None, batch_size=DEFAULT_BATCH, max_batches=20):
    """One pass over every project with a retention: ``{slug: runs deleted}``.

    Bounded: at most ``max_batches`` batches per project; the rest waits for the next
    sweep. Idempotent and safe to run from several workers at once (a run deleted by
    one is simply absent for the other).
    """
    deleted = {}
    for project in Project.objects.filter(retention_days__isnull=False, retention_days__gt=0):
        total = 0
        for _ in range(max_batches):
            n = retention_batch(project=project, now=now, batch_size=batch_size)
            total += n
            if n < batch_size:
                break
        if total:
            deleted[project.slug] = total
    return deleted


@dataclass
class RetentionSummary:
    retention_days: int | None
    total: int
    expired: int = 0
    kept: dict | None = None  # reason -> expired runs kept for it (a run may have several)


def retention_summary(project, now=None):
    """How many runs the project holds, and of the expired ones, how many are kept and why."""
    total = Trace.objects.filter(project=project).count()
    if not project.retention_days:
        return RetentionSummary(project.retention_days, total)
    old = _old(project, now or timezone.now())
    kept = {reason: old.filter(rule).count() for reason, rule in _kept_rules(project).items()}
    return RetentionSummary(project.retention_days, total, old.count(), kept)
