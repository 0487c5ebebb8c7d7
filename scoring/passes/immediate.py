"""Scoring in the request (``POST /v1/api/score``): the steps of a pass, for a few runs, now.

``score_now`` loads, scores and writes the selected runs with the same engine and
writer as a worker pass (``scoring.pipeline.engine``, ``scoring.pipeline.writer``), so the same rules
hold: a score is written once, a stale one is replaced, the quota is exact, every
abstention and skip is recorded. It takes at most ``SYNC_MAX_RUNS`` runs (judge
criteria: ``R // (T x J)``) and stops scoring at a deadline inside
``EVALSITE_REQUEST_TIMEOUT_SECONDS``: runs not reached get ``deadline`` skips and the
answer still comes in time. A request that writes is recorded as a non-background
``ScoringPass``.
"""

import time
from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from scoring.judge.criteria import outcomes_judge
from scoring.models import PassStatus, ScoringPass
from scoring.pipeline.engine import outcomes_compute, score_as_dict, skip_as_dict
from scoring.pipeline.loading import experiment_names, runs_load
from scoring.pipeline.writer import WriteReport, keys_decided, outcomes_write
from scoring.selection.catalog import catalog_for, judge_deadline
from scoring.selection.requests import score_request_read, selection_pks

# Share of the request timeout spent scoring; the rest is left for loading, writing
# and answering.
SYNC_SCORING_SHARE = 0.75


@dataclass
class ScoreNowResult:
    scores: list
    skipped: list
    existing: int
    runs: int
    dry_run: bool
    scoring_pass: ScoringPass | None


def score_now(*, project, data, requested_by=None, requested_by_key=None):
    """Score the selected runs in this request and write the scores (unless ``dry_run``).

    Same rules as a pass (idempotent, quota-bounded, abstentions recorded), for at most
    ``SYNC_MAX_RUNS`` runs (fewer with judge criteria: ``R // (T x J)``). Built-in
    scorers stop at a deadline inside ``EVALSITE_REQUEST_TIMEOUT_SECONDS``: runs not
    reached are ``deadline`` skips. Judge calls then run concurrently, each score
    written as soon as the model answers; a call that cannot end by the request's
    deadline is not made (a ``deadline`` abstention). A written request is recorded as
    a non-background ``ScoringPass``, finished when the answer is.
    """
    started = time.monotonic()
    request = score_request_read(project=project, data=data, background=False)
    available = catalog_for(project).scorers
    plan = request.plan(available)
    runs = runs_load(list(selection_pks(project=project, request=request)), spans=plan.reads)
    decided, _ = keys_decided(trace_pks=[r.pk for r in runs], scorer_ids=list(request.scorer_ids))
    outcomes, already = outcomes_compute(
        plan, runs, decided=decided, deadline=started + settings.EVALSITE_REQUEST_TIMEOUT_SECONDS * SYNC_SCORING_SHARE
    )
    scoring_pass = None if request.dry_run else _pass_record(project, request, runs, requested_by, requested_by_key)
    report = WriteReport()

    def write(batch_runs, batch):
        with transaction.atomic():
            written = outcomes_write(
                project=project,
                pass_id=scoring_pass.pk if scoring_pass else None,
                runs=batch_runs,
                outcomes=batch,
                dry_run=request.dry_run,
                now=timezone.now(),
            )
        report.written.extend(written.written)
        report.recorded.extend(written.recorded)
        report.existing += written.existing

    write(runs, outcomes)
    already += outcomes_judge(
        plan,
        runs,
        decided=decided,
        deadline=judge_deadline(started),
        on_outcome=lambda outcome: write([outcome.run], [outcome]),
    )
    if scoring_pass is not None:
        _pass_finish(scoring_pass, runs, report, already)
    experiments = experiment_names(runs)
    return ScoreNowResult(
        scores=[score_as_dict(o, experiments) for o in report.written],
        skipped=[skip_as_dict(o) for o in report.recorded],
        existing=already + report.existing,
        runs=len(runs),
        dry_run=request.dry_run,
        scoring_pass=scoring_pass,
    )


def _pass_record(project, request, runs, requested_by, requested_by_key):
    """The request as a running, non-background pass (its scores and skips point at it)."""
    now = timezone.now()
    return ScoringPass.objects.create(
        project=project,
        scorers=list(request.scorers),
        config=request.config,
        selection=request.selection(),
        background=False,
        status=PassStatus.RUNNING,
        total=len(runs),
        chunk_runs=max(1, len(runs)),
        requested_by=requested_by,
        requested_by_key=requested_by_key,
        started_at=now,
        progressed_at=now,
    )


def _pass_finish(scoring_pass, runs, report, already):
    ScoringPass.objects.filter(pk=scoring_pass.pk).update(
        status=PassStatus.DONE,
        done=len(runs),
        written=len(report.written),
        skipped=len(report.recorded),
        existing=already + report.existing,
        finished_at=timezone.now(),
    )
    scoring_pass.refresh_from_db()
