"""Scoring passes run by Celery workers (``POST /passes``), chunk by chunk.

A background pass goes through these steps, each safe to run twice:

1. ``pass_start`` checks the request (``scoring.selection.requests``), stores the pass
   ``queued`` and, once committed, sends ``scoring.pass_plan``.
2. ``pass_plan`` (pass row locked; a pass that is no longer ``queued`` is left alone)
   streams the selected runs' primary keys into ``ScoringChunk`` rows of
   ``chunk_runs`` runs each, marks the pass ``running`` with its ``total``, and once
   committed sends one ``scoring.chunk_score`` per chunk.
3. ``chunk_score`` claims its chunk by compare-and-set with the task's id as the claim
   token (a chunk that is queued, or whose lease ran out, or that the same message
   already held before a redelivery), then loads, scores and writes it in batches of
   ``WRITE_BATCH_RUNS``. Each batch commits its scores and the chunk's counters
   together, only while the claim is still ours; a thread renews the lease every
   third of it while the chunk is worked on (``scoring.passes.chunk_lease``). The chunk is
   then marked done by compare-and-set, the pass counters take its totals (so a chunk
   never counts twice), and the chunk that finishes last marks the pass ``done``.
   Judge criteria are called after each batch's built-in scores, concurrently
   (``scoring.judge.criteria``), and each judge score is written with the chunk's counters
   as soon as the model answers: a worker killed midway keeps every one it finished,
   and the chunk's next claim judges only what is missing.
4. ``passes_resume`` (sent by every worker every ``sweep_interval()`` seconds) marks
   failed a pass run inside a request that was killed before it answered, and sends
   again: the plan of a pass still ``queued`` after a lease period, each chunk whose
   lease ran out (its worker died), and the queued chunks of a pass that made no
   progress for a lease period (a lost message). Redis also redelivers an unacked
   message after its visibility timeout; a duplicate message finds its chunk done or
   held and does nothing.

A permanent error marks the pass ``failed`` with the error text; transient database
errors are retried by the task. ``scoring.passes.immediate.score_now`` runs the same
load/score/write steps in the request (``POST /score``).
"""

import itertools
import logging
import os
import socket
from dataclasses import dataclass, field
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.db.models.functions import Coalesce
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from datasets.models import Experiment
from evalsite.background import TRANSIENT_ERRORS, lease
from evalsite.broker import send_or_leave_to_sweeper
from scoring.judge.criteria import is_judged, outcomes_judge
from scoring.models import ChunkStatus, PassStatus, ScoringChunk, ScoringPass
from scoring.passes.batch_writer import BatchWriter
from scoring.passes.chunk_lease import chunk_lease_kept
from scoring.passes.summaries import summaries_build
from scoring.pipeline.engine import outcomes_compute, score_as_dict, skip_as_dict
from scoring.pipeline.loading import experiment_names, runs_load
from scoring.pipeline.writer import keys_decided, outcome_configs_store, outcomes_write
from scoring.selection.catalog import catalog_for
from scoring.selection.requests import plan_of, score_request_from_pass, score_request_read, selection_pks

logger = logging.getLogger(__name__)

# Runs loaded, scored and written per transaction inside a chunk: bounds memory and
# the time a batch holds its runs' locks, and is the grain of lease renewal.
WRITE_BATCH_RUNS = 500
# Chunk rows written per INSERT while planning (memory stays flat on huge passes).
PLAN_FLUSH_CHUNKS = 20
# What a dry-run pass keeps per chunk of what it would have written and skipped.
DRY_RUN_SAMPLE = 20
# Beyond the request timeout, the margin after which a pass run inside a request that
# still says ``running`` is known to be abandoned (the web server kills a request after
# its timeout plus 30 s).
ABANDONED_AFTER_SECONDS = 60


class ClaimLost(Exception):
    """Another task took the chunk (our lease ran out), or the pass failed: our batch is rolled back."""


# --- starting a pass ----------------------------------------------------------------


def pass_start(*, project, data, requested_by=None, requested_by_key=None, chunk_runs=None, queue=None):
    """Check a pass request and store the pass ``queued``; its planning is sent on commit.

    ``data`` is the request body (``scorers``, ``config``, ``trace_ids``, ``from``,
    ``limit``, ``experiment``, ``dry_run``). ``chunk_runs`` (runs per chunk) defaults
    to ``EVALSITE_PASS_CHUNK_RUNS``; ``queue`` is the Celery queue of every task of
    the pass (the default queue when empty). Raises ``Invalid``; writes nothing then.
    """
    request = score_request_read(project=project, data=data, background=True)
    with transaction.atomic():
        now = timezone.now()
        scoring_pass = ScoringPass.objects.create(
            project=project,
            scorers=list(request.scorers),
            config=request.config,
            selection=request.selection(until=now),
            dry_run=request.dry_run,
            background=True,
            status=PassStatus.QUEUED,
            chunk_runs=chunk_runs or settings.EVALSITE_PASS_CHUNK_RUNS,
            queue=queue or "",
            requested_by=requested_by,
            requested_by_key=requested_by_key,
            progressed_at=now,
        )
        # The broker may be away: the pass stays queued and the sweeper sends it later.
        transaction.on_commit(
            lambda: send_or_leave_to_sweeper(lambda: _send_plan(scoring_pass), what=f"pass {scoring_pass.pk}")
        )
    return scoring_pass


def pass_plan(*, pass_id):
    """Split a queued pass into chunks and send them; a no-op for a pass already planned.

    Returns the number of chunks created.
    """
    with transaction.atomic():
        # Only the pass row: locking the project too would hold up every writer of its runs.
        scoring_pass = (
            ScoringPass.objects.select_for_update(of=("self",)).select_related("project").filter(pk=pass_id).first()
        )
        if scoring_pass is None or scoring_pass.status != PassStatus.QUEUED:
            return 0
        request = score_request_from_pass(scoring_pass)
        until = scoring_pass.selection.get("until")
        pks = selection_pks(
            project=scoring_pass.project, request=request, until=parse_datetime(until) if until else None
        )
        total = chunks = 0
        pending = []
        for ordinal, batch in enumerate(_batched(pks, scoring_pass.chunk_runs)):
            pending.append(ScoringChunk(scoring_pass=scoring_pass, ordinal=ordinal, trace_pks=batch, runs=len(batch)))
            total += len(batch)
            chunks += 1
            if len(pending) >= PLAN_FLUSH_CHUNKS:
                ScoringChunk.objects.bulk_create(pending)
                pending = []
        ScoringChunk.objects.bulk_create(pending)
        now = timezone.now()
        scoring_pass.total = total
        scoring_pass.chunks_total = chunks
        scoring_pass.started_at = now
        scoring_pass.progressed_at = now
        scoring_pass.status = PassStatus.RUNNING if chunks else PassStatus.DONE
        if not chunks:
            scoring_pass.finished_at = now
        scoring_pass.save(
            update_fields=["total", "chunks_total", "started_at", "progressed_at", "status", "finished_at"]
        )
        if chunks:
            transaction.on_commit(
                lambda: _send_chunks(scoring_pass, ScoringChunk.objects.filter(scoring_pass=scoring_pass))
            )
    return chunks


# --- scoring a chunk ----------------------------------------------------------------


def chunk_score(*, chunk_id, token):
    """Claim chunk ``chunk_id`` for the task ``token`` and score it; returns its status.

    ``"skipped"`` when the chunk is done, held by another live claim, or its pass is
    not running. Transient database errors propagate (the task retries them); any
    other error marks the pass failed and propagates.
    """
    chunk = _chunk_claim(chunk_id, token)
    if chunk is None:
        return "skipped"
    scoring_pass = chunk.scoring_pass
    try:
        if scoring_pass.status != PassStatus.RUNNING:
            return "skipped"
        with chunk_lease_kept(chunk, token):
            totals = _chunk_work(chunk, scoring_pass, token)
        if totals is None:
            return "skipped"
        if _chunk_finish(chunk, token, totals):
            _summary_after(scoring_pass)
        return "done"
    except TRANSIENT_ERRORS:
        raise
    except Exception as exc:
        pass_fail(pass_id=scoring_pass.pk, error=f"chunk {chunk.ordinal}: {type(exc).__name__}: {exc}")
        raise


@dataclass
class _Totals:
    written: int = 0
    skipped: int = 0
    existing: int = 0
    report: dict = field(default_factory=lambda: {"scores": [], "skipped": [], "skipped_by_reason": {}})


def _chunk_work(chunk, scoring_pass, token):
    """Load, score and write the chunk batch by batch; its totals, or None when the claim was lost."""
    project = scoring_pass.project
    available = catalog_for(project).scorers
    plan = plan_of(available, scoring_pass.scorers, scoring_pass.config)
    scorer_ids = [scorer.id for scorer in plan.scorers]
    judged = any(is_judged(scorer) for scorer in plan.scorers)
    totals = _Totals()
    # Inside a caller's transaction every write must stay on its connection; otherwise
    # each batch is written on a second one while the next batch is loaded and scored.
    writer = BatchWriter(pipelined=not transaction.get_connection().in_atomic_block)
    try:
        for start in range(0, len(chunk.trace_pks), WRITE_BATCH_RUNS):
            runs = runs_load(chunk.trace_pks[start : start + WRITE_BATCH_RUNS], spans=plan.reads)
            decided = {}
            if not scoring_pass.dry_run and (judged or chunk.attempts > 1):
                # Not to ask the judge again, nor score again what an earlier attempt
                # wrote. The writer checks again under its locks in any case, so a pass
                # of built-in checks on a first attempt skips this read: the checks cost
                # less than reading what is stored.
                decided, _ = keys_decided(
                    trace_pks=[r.pk for r in runs],
                    scorer_ids=scorer_ids,
                    pass_id=scoring_pass.pk,
                    with_abstentions=chunk.attempts > 1,
                )
            outcomes, already = outcomes_compute(plan, runs, decided=decided)
            if not scoring_pass.dry_run:
                # Here, while the writer thread still writes the batch before: its
                # configs are then not part of the critical path of the writes.
                _configs_store(scoring_pass.project_id, outcomes)
            writer.submit(
                _batch_write, chunk, scoring_pass, token, runs, outcomes, already, totals, configs_stored=True
            )
            if judged:
                # Each judge score is written (and the lease renewed) as soon as the model answers.
                writer.wait()
                already = outcomes_judge(
                    plan,
                    runs,
                    decided=decided,
                    on_outcome=lambda o: _batch_write(chunk, scoring_pass, token, [o.run], [o], 0, totals),
                )
                _batch_write(chunk, scoring_pass, token, [], [], already, totals)
        writer.wait()
    except ClaimLost:
        logger.info("pass %s chunk %s: claim lost to another task; stopping", scoring_pass.pk, chunk.ordinal)
        return None
    finally:
        writer.close()
    return totals


def _configs_store(project_id, outcomes):
    """Store the configs a batch's scores name, in a transaction of their own."""
    with transaction.atomic():
        outcome_configs_store(project_id, outcomes)


def _batch_write(chunk, scoring_pass, token, runs, outcomes, already, totals, *, configs_stored=False):
    """Write one batch and the chunk's counters together, while the claim is still ours.

    ``configs_stored``: the batch's configs were stored before (``_configs_store``).
    """
    with transaction.atomic():
        now = timezone.now()
        report = outcomes_write(
            project=scoring_pass.project,
            pass_id=scoring_pass.pk,
            runs=runs,
            outcomes=outcomes,
            dry_run=scoring_pass.dry_run,
            now=now,
            retried=chunk.attempts > 1,
            configs_stored=configs_stored,
        )
        written, skipped, existing = len(report.written), len(report.recorded), already + report.existing
        if scoring_pass.dry_run:
            totals.written += written
            totals.skipped += skipped
            totals.existing += existing
            _sample(totals.report, report)
            counters = {}
        else:
            counters = {
                "written": F("written") + written,
                "skipped": F("skipped") + skipped,
                "existing": F("existing") + existing,
            }
        # Only while the claim is ours and the pass still runs (another chunk may have failed it).
        renewed = ScoringChunk.objects.filter(
            pk=chunk.pk, status=ChunkStatus.RUNNING, token=token, scoring_pass__status=PassStatus.RUNNING
        ).update(lease_until=now + lease(), **counters)
        if not renewed:
            raise ClaimLost()


def _chunk_claim(chunk_id, token):
    now = timezone.now()
    claimable = Q(status=ChunkStatus.QUEUED) | Q(status=ChunkStatus.RUNNING) & (
        Q(token=token) | Q(lease_until__lt=now) | Q(lease_until__isnull=True)
    )
    claimed = (
        ScoringChunk.objects.filter(claimable, pk=chunk_id)
        .exclude(scoring_pass__status__in=[PassStatus.DONE, PassStatus.FAILED])
        .update(
            status=ChunkStatus.RUNNING,
            token=token,
            claimed_by=f"{socket.gethostname()}:{os.getpid()}",
            lease_until=now + lease(),
            attempts=F("attempts") + 1,
            started_at=Coalesce("started_at", now),
        )
    )
    if not claimed:
        return None
    chunk = ScoringChunk.objects.select_related("scoring_pass__project").get(pk=chunk_id)
    ScoringPass.objects.filter(pk=chunk.scoring_pass_id).update(progressed_at=now)
    return chunk


def _chunk_finish(chunk, token, totals):
    """Mark the chunk done and add it to its pass's counters; True when it was the pass's last."""
    with transaction.atomic():
        scoring_pass = ScoringPass.objects.select_for_update().get(pk=chunk.scoring_pass_id)
        now = timezone.now()
        extra = {}
        if scoring_pass.dry_run:
            # A dry run keeps nothing between attempts: the last attempt's totals stand.
            extra = {"written": totals.written, "skipped": totals.skipped, "existing": totals.existing}
            extra["report"] = totals.report
        finished = ScoringChunk.objects.filter(pk=chunk.pk, status=ChunkStatus.RUNNING, token=token).update(
            status=ChunkStatus.DONE, finished_at=now, **extra
        )
        if not finished or scoring_pass.status != PassStatus.RUNNING:
            return False
        counts = ScoringChunk.objects.values("runs", "written", "skipped", "existing").get(pk=chunk.pk)
        scoring_pass.done += counts["runs"]
        scoring_pass.written += counts["written"]
        scoring_pass.skipped += counts["skipped"]
        scoring_pass.existing += counts["existing"]
        scoring_pass.chunks_done += 1
        scoring_pass.progressed_at = now
        fields = ["done", "written", "skipped", "existing", "chunks_done", "progressed_at"]
        if scoring_pass.chunks_done >= scoring_pass.chunks_total:
            scoring_pass.status = PassStatus.DONE
            scoring_pass.finished_at = now
            fields += ["status", "finished_at"]
        scoring_pass.save(update_fields=fields)
    return scoring_pass.status == PassStatus.DONE


def _summary_after(scoring_pass):
    """Build the summary of the experiment a finished pass selected, so compare finds it ready."""
    name = scoring_pass.selection.get("experiment")
    if scoring_pass.dry_run or not name:
        return
    experiment = Experiment.objects.filter(project_id=scoring_pass.project_id, name=name).first()
    if experiment is not None:
        summaries_build([experiment.pk])


def pass_fail(*, pass_id, error):
    """Mark a pass that is not finished ``failed`` with ``error``; returns whether it was."""
    return bool(
        ScoringPass.objects.filter(pk=pass_id, status__in=[PassStatus.QUEUED, PassStatus.RUNNING]).update(
            status=PassStatus.FAILED, error=str(error)[:10000], finished_at=timezone.now()
        )
    )


# --- recovering lost work -----------------------------------------------------------


def passes_resume(*, now=None):
    """Send again the work of unfinished passes whose messages or workers were lost.

    Safe to run any number of times from any number of workers: a duplicate message
    finds its chunk claimed or done and does nothing, and each chunk is sent again at
    most once per lease period. Returns how many messages were sent.
    """
    now = now or timezone.now()
    expired = now - lease()
    # A pass run inside a request (POST /score) whose process died before it answered:
    # past any request's timeout it is marked failed. The scores it wrote stay.
    ScoringPass.objects.filter(
        background=False,
        status=PassStatus.RUNNING,
        progressed_at__lt=now - timedelta(seconds=settings.EVALSITE_REQUEST_TIMEOUT_SECONDS + ABANDONED_AFTER_SECONDS),
    ).update(status=PassStatus.FAILED, error="the request that ran this pass ended before it finished", finished_at=now)
    sent = 0
    for scoring_pass in ScoringPass.objects.filter(status=PassStatus.QUEUED, progressed_at__lt=expired):
        if ScoringPass.objects.filter(pk=scoring_pass.pk, progressed_at__lt=expired).update(progressed_at=now):
            _send_plan(scoring_pass)
            sent += 1
    resend_before = Q(dispatched_at__isnull=True) | Q(dispatched_at__lt=expired)
    lost_workers = Q(status=ChunkStatus.RUNNING, lease_until__lt=now)
    lost_messages = Q(status=ChunkStatus.QUEUED, scoring_pass__progressed_at__lt=expired)
    chunks = ScoringChunk.objects.filter(scoring_pass__status=PassStatus.RUNNING).filter(lost_workers | lost_messages)
    for scoring_pass_id, group in itertools.groupby(
        chunks.filter(resend_before)
        .order_by("scoring_pass_id", "ordinal")
        .values_list("scoring_pass_id", "pk", named=True),
        key=lambda row: row.scoring_pass_id,
    ):
        scoring_pass = ScoringPass.objects.get(pk=scoring_pass_id)
        sent += _send_chunks(
            scoring_pass, ScoringChunk.objects.filter(pk__in=[row.pk for row in group]).filter(resend_before)
        )
    return sent


# --- helpers ------------------------------------------------------------------------


def _batched(iterable, size):
    iterator = iter(iterable)
    while batch := list(itertools.islice(iterator, size)):
        yield batch


def _sample(sample, report):
    by_reason = sample["skipped_by_reason"]
    for outcome in report.recorded:
        by_reason[outcome.result.reason] = by_reason.get(outcome.result.reason, 0) + 1
    if len(sample["scores"]) < DRY_RUN_SAMPLE:
        kept = report.written[: DRY_RUN_SAMPLE - len(sample["scores"])]
        names = experiment_names(o.run for o in kept)
        sample["scores"].extend(score_as_dict(o, names) for o in kept)
    if len(sample["skipped"]) < DRY_RUN_SAMPLE:
        sample["skipped"].extend(skip_as_dict(o) for o in report.recorded[: DRY_RUN_SAMPLE - len(sample["skipped"])])


def _send_plan(scoring_pass):
    from scoring.tasks import pass_plan_task

    pass_plan_task.apply_async(args=[scoring_pass.pk], queue=scoring_pass.queue or None)


def _send_chunks(scoring_pass, chunks):
    """Send a task for each of ``chunks`` and stamp them dispatched; returns how many."""
    from scoring.tasks import chunk_score_task

    pks = list(chunks.values_list("pk", flat=True))
    if not pks:
        return 0
    ScoringChunk.objects.filter(pk__in=pks).update(dispatched_at=timezone.now())
    for pk in pks:
        chunk_score_task.apply_async(args=[pk], queue=scoring_pass.queue or None)
    return len(pks)
