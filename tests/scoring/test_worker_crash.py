"""A worker killed with SIGKILL in the middle of a pass loses nothing and duplicates nothing.

A real worker scores a pass of 3,000 runs in chunks. Once a chunk is done and the next
has committed its first batch of scores and is scoring the rest, the worker (its main
process and the child running the chunk) is killed with ``kill -9``: no clean-up code
runs, the message is not acknowledged, the chunk is left half written. A second worker
is started, and the pass completes with every score written exactly once.

How the lost chunk comes back depends on the broker, and the test passes on both:
Redis redelivers the unacknowledged message after its visibility timeout; the
filesystem broker never redelivers, and the sweeper every worker runs sends the chunk
again once its lease has run out. Both are set to a few seconds here.
"""

import os
import time
from pathlib import Path

import pytest
from django.conf import settings
from django.db.models import Count

from datasets.ingestion import traces_ingest
from scoring.models import Abstention, ChunkStatus, PassStatus, Score, ScoringChunk, ScoringPass
from scoring.passes.services import pass_start
from tests.factories import run_payload
from tests.live import kill_worker, process_stop, wait_for, worker_start

pytestmark = pytest.mark.worker

RUNS = 3000
# Two write batches per chunk (scoring.passes.services.WRITE_BATCH_RUNS is 500), so the worker
# can be killed between a chunk's first commit and its last.
CHUNK_RUNS = 1000
SCORERS = ["answered", "no_errors", "exact_match", "no_tool_loop", "not_a_refusal", "no_leaked_secret"]
WORKER_ENV = {"EVALSITE_CHUNK_LEASE_SECONDS": 5, "EVALSITE_VISIBILITY_TIMEOUT_SECONDS": 5}


def _runs_create(project, count):
    for start in range(0, count, 1000):
        traces_ingest(
            project=project,
            payload={
                "traces": [
                    run_payload(
                        f"crash-{i:05d}", started_at=f"2026-11-30T{i // 3600:02d}:{i // 60 % 60:02d}:{i % 60:02d}Z"
                    )
                    for i in range(start, min(count, start + 1000))
                ]
            },
        )


def test_a_pass_completes_exactly_once_after_its_worker_is_killed_mid_chunk(transactional_db, actors, tmp_path):
    _runs_create(actors.acme, RUNS)
    queue = f"crash-{os.getpid()}-{int(time.time())}"
    log = Path(settings.VAR_DIR) / f"test-worker-{queue}.log"
    first = worker_start(queue=queue, concurrency=1, log_path=log, env=WORKER_ENV)
    second = None
    try:
        scoring_pass = pass_start(
            project=actors.acme, data={"scorers": SCORERS, "limit": RUNS}, chunk_runs=CHUNK_RUNS, queue=queue
        )

        def mid_chunk():
            # A chunk is done, and the next has committed its first batch and is scoring the rest.
            return (
                ScoringPass.objects.filter(pk=scoring_pass.pk, done__gte=CHUNK_RUNS).exists()
                and ScoringChunk.objects.filter(
                    scoring_pass=scoring_pass, status=ChunkStatus.RUNNING, written__gt=0
                ).exists()
            )

        wait_for(mid_chunk, timeout=180, interval=0.01, what="the pass to be in the middle of a chunk")
        kill_worker(first)
        killed_at = ScoringPass.objects.get(pk=scoring_pass.pk)
        assert killed_at.status == PassStatus.RUNNING
        assert 0 < killed_at.done < RUNS
        interrupted = dict(
            ScoringChunk.objects.filter(scoring_pass=scoring_pass, status=ChunkStatus.RUNNING).values_list(
                "pk", "written"
            )
        )
        # Killed with part of a chunk written and the rest not.
        assert any(0 < written < CHUNK_RUNS * (len(SCORERS) - 1) for written in interrupted.values())

        second = worker_start(queue=queue, concurrency=1, log_path=log, env=WORKER_ENV)
        wait_for(
            lambda: ScoringPass.objects.filter(pk=scoring_pass.pk, status=PassStatus.DONE).exists(),
            timeout=240,
            interval=0.5,
            what=f"the pass to finish after the crash (see {log})",
        )
    finally:
        for process in (first, second):
            if process is not None:
                process_stop(process)

    scoring_pass.refresh_from_db()
    expected_scores = RUNS * (len(SCORERS) - 1)  # exact_match has no expected answer: it abstains
    assert Score.objects.filter(scoring_pass=scoring_pass).count() == expected_scores
    assert Abstention.objects.filter(scoring_pass=scoring_pass).count() == RUNS
    duplicates = Score.objects.values("trace", "scorer").annotate(n=Count("id")).filter(n__gt=1)
    assert not duplicates.exists()
    assert (scoring_pass.total, scoring_pass.done) == (RUNS, RUNS)
    assert (scoring_pass.written, scoring_pass.skipped, scoring_pass.existing) == (expected_scores, RUNS, 0)
    assert not ScoringChunk.objects.filter(scoring_pass=scoring_pass).exclude(status=ChunkStatus.DONE).exists()
    # The chunk the first worker was writing was taken again.
    assert ScoringChunk.objects.filter(pk__in=list(interrupted), attempts__gte=2).count() == len(interrupted)
