"""Chunk leases: a dead worker's chunk is taken over in about 30 s on default settings,
and a slow live worker keeps its chunk however long one step takes.

Each chunk is scored against a real (slow, local) judge, so a chunk takes long enough
to kill its worker in the middle. Nothing here shortens the lease in the first test:
the figure is the one a deployment gets.
"""

import os
import time
from pathlib import Path

import pytest
from django.conf import settings
from django.db.models import Count

from scoring.judge.services import judge_configure
from scoring.models import ChunkStatus, PassStatus, Score, ScoringChunk, ScoringPass
from scoring.passes.services import pass_start
from tests.factories import trace_create
from tests.live import children_of, kill_worker, process_stop, wait_for, worker_start
from tests.scoring.judge_server import judge_server, says

pytestmark = pytest.mark.worker

TAKEOVER_BOUND_SECONDS = 35


def _judge(project, judge, *, delay, timeout_seconds=5):
    judge.default = says('{"score": 1, "reason": "fine"}', delay=delay)
    judge_configure(
        project=project, endpoint=judge.url, model="m", timeout_seconds=timeout_seconds, max_concurrency=1,
        criteria={"relevance": "Does the answer address the question?"},
    )  # fmt: skip


def _stop(*processes):
    # What is measured here is the takeover: a worker slow to finish its warm shutdown
    # on a loaded machine is killed rather than failing the test after it passed.
    for process in processes:
        if process is not None:
            process_stop(process)


def _chunk(scoring_pass):
    return ScoringChunk.objects.filter(scoring_pass=scoring_pass).first()


def test_a_killed_workers_chunk_is_taken_over_within_about_30_seconds_on_default_settings(transactional_db, actors):
    runs = 60
    for i in range(runs):
        trace_create(actors.acme, f"lease-{i:02d}", started_at=f"2026-11-30T10:{i:02d}:00Z")
    queue = f"lease-{os.getpid()}-{int(time.time())}"
    log = Path(settings.VAR_DIR) / f"test-worker-{queue}.log"
    first = second = None
    with judge_server() as judge:
        _judge(actors.acme, judge, delay=0.5)
        try:
            first = worker_start(queue=queue, log_path=log)
            second = worker_start(queue=queue, log_path=log)
            scoring_pass = pass_start(project=actors.acme, data={"scorers": ["relevance"], "limit": runs}, queue=queue)
            wait_for(lambda: Score.objects.filter(scorer="relevance").count() >= 2, timeout=120, what=f"scores ({log})")
            holder = _chunk(scoring_pass).claimed_by
            victim = first if holder.endswith(tuple(f":{pid}" for pid in _pids(first))) else second
            kill_worker(victim)
            killed_at = time.monotonic()
            taken = wait_for(
                lambda: ScoringChunk.objects.filter(scoring_pass=scoring_pass, attempts__gte=2).first(),
                timeout=90, interval=0.1, what=f"another worker to take the chunk over ({log})",
            )  # fmt: skip
            took = time.monotonic() - killed_at
            print(f"chunk taken over {took:.1f}s after its worker was killed (default lease)")
            assert taken.claimed_by != holder
            assert took < TAKEOVER_BOUND_SECONDS
            wait_for(
                lambda: ScoringPass.objects.filter(pk=scoring_pass.pk, status=PassStatus.DONE).exists(),
                timeout=180, what=f"the pass to finish ({log})",
            )  # fmt: skip
        finally:
            _stop(first, second)
    assert Score.objects.filter(scorer="relevance").count() == runs
    assert not Score.objects.values("trace", "scorer").annotate(n=Count("id")).filter(n__gt=1).exists()


def test_a_slow_live_worker_keeps_its_chunk_past_the_lease(transactional_db, actors):
    runs = 3
    for i in range(runs):
        trace_create(actors.acme, f"slow-{i}", started_at=f"2026-11-30T10:0{i}:00Z")
    queue = f"slow-{os.getpid()}-{int(time.time())}"
    log = Path(settings.VAR_DIR) / f"test-worker-{queue}.log"
    # Each judge call takes longer than the whole lease: only renewal while it waits keeps the chunk.
    env = {"EVALSITE_CHUNK_LEASE_SECONDS": 2, "EVALSITE_VISIBILITY_TIMEOUT_SECONDS": 3600}
    first = second = None
    with judge_server() as judge:
        _judge(actors.acme, judge, delay=3, timeout_seconds=10)
        try:
            first = worker_start(queue=queue, log_path=log, env=env)
            second = worker_start(queue=queue, log_path=log, env=env)
            scoring_pass = pass_start(project=actors.acme, data={"scorers": ["relevance"], "limit": runs}, queue=queue)
            wait_for(
                lambda: ScoringPass.objects.filter(pk=scoring_pass.pk, status=PassStatus.DONE).exists(),
                timeout=120, what=f"the pass to finish ({log})",
            )  # fmt: skip
        finally:
            _stop(first, second)
    chunk = _chunk(scoring_pass)
    assert (chunk.status, chunk.attempts) == (ChunkStatus.DONE, 1)
    assert judge.count == runs


def _pids(process):
    return [process.pid, *children_of(process.pid)]
