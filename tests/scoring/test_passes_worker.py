"""A real Celery worker on the real broker runs passes: planning, chunks, and the sweeper."""

from datetime import timedelta

import pytest
from django.utils import timezone

from scoring.models import PassStatus, Score, ScoringChunk, ScoringPass
from scoring.passes.services import pass_start
from tests.factories import trace_create
from tests.live import celery_worker, wait_for

pytestmark = pytest.mark.worker


def _done(scoring_pass):
    return ScoringPass.objects.filter(pk=scoring_pass.pk, status__in=[PassStatus.DONE, PassStatus.FAILED]).first()


def test_a_worker_runs_a_pass_chunk_by_chunk_to_the_end(transactional_db, actors):
    for i in range(25):
        trace_create(actors.acme, f"w-{i}", started_at=f"2026-11-30T10:{i:02d}:00Z")
    with celery_worker(concurrency=2) as (queue, _process):
        scoring_pass = pass_start(
            project=actors.acme, data={"scorers": ["answered", "exact_match"]}, chunk_runs=4, queue=queue
        )
        finished = wait_for(lambda: _done(scoring_pass), timeout=120, what="the pass")
    assert finished.status == PassStatus.DONE
    assert (finished.total, finished.done, finished.written, finished.skipped) == (25, 25, 25, 25)
    assert finished.chunks_total == finished.chunks_done == 7
    assert Score.objects.count() == 25
    assert set(ScoringChunk.objects.filter(scoring_pass=scoring_pass).values_list("status", flat=True)) == {"done"}

    body = actors.api().get(f"/v1/api/passes/{scoring_pass.pk}").json()
    assert (body["status"], body["progress"], body["written"]) == ("done", 1.0, 25)


def test_a_starting_worker_sends_again_the_plan_of_a_pass_whose_message_was_lost(transactional_db, actors):
    trace_create(actors.acme, "lost-1")
    long_ago = timezone.now() - timedelta(days=1)
    # A pass stored as queued whose planning message never reached the broker.
    scoring_pass = ScoringPass.objects.create(
        project=actors.acme,
        scorers=["answered"],
        selection={"limit": 10, "until": timezone.now().isoformat()},
        status=PassStatus.QUEUED,
        progressed_at=long_ago,
    )
    with celery_worker() as (queue, _process):
        ScoringPass.objects.filter(pk=scoring_pass.pk).update(queue=queue)
        finished = wait_for(lambda: _done(scoring_pass), timeout=120, what="the sweeper to resume the pass")
    assert finished.status == PassStatus.DONE
    assert finished.written == 1
