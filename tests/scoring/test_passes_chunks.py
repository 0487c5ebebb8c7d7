"""Chunks of a pass: claimed by compare-and-set, safe to process twice, recovered when lost.

These call the services the tasks call, with the task id as the claim token, and
simulate what a dying worker or a redelivered message leaves behind.
"""

from datetime import timedelta

import pytest
from django.db import OperationalError
from django.utils import timezone

from datasets.models import Span, Trace
from scoring.models import Abstention, ChunkStatus, PassStatus, Score, ScoreConfig, ScoringChunk, ScoringPass
from scoring.passes import services as passes
from scoring.passes.services import chunk_score, pass_plan, pass_start, passes_resume
from tests.factories import trace_create

BODY = {"scorers": ["answered", "exact_match"]}


@pytest.fixture
def runs(actors):
    return [trace_create(actors.acme, f"run-{i}", started_at=f"2026-11-30T10:{i:02d}:00Z") for i in range(6)]


@pytest.fixture
def planned(actors, runs):
    scoring_pass = pass_start(project=actors.acme, data=BODY, chunk_runs=3)
    pass_plan(pass_id=scoring_pass.pk)
    return scoring_pass, list(ScoringChunk.objects.filter(scoring_pass=scoring_pass).order_by("ordinal"))


def _refresh(obj):
    obj.refresh_from_db()
    return obj


class WorkerKilled(BaseException):
    """What a SIGKILL looks like from inside: the code after it never runs."""


def test_a_chunk_whose_worker_died_after_writing_is_finished_by_the_redelivered_message(planned, monkeypatch):
    scoring_pass, chunks = planned

    def killed(*args, **kwargs):
        raise WorkerKilled

    with monkeypatch.context() as patch:
        patch.setattr(passes, "_chunk_finish", killed)
        with pytest.raises(WorkerKilled):
            chunk_score(chunk_id=chunks[0].pk, token="message-1")
    chunk = _refresh(chunks[0])
    assert (chunk.status, chunk.written, chunk.skipped) == (ChunkStatus.RUNNING, 3, 3)
    assert Score.objects.count() == 3

    # Redis redelivers the same message (same task id): it takes its chunk back at once.
    assert chunk_score(chunk_id=chunks[0].pk, token="message-1") == "done"
    chunk = _refresh(chunks[0])
    assert (chunk.status, chunk.written, chunk.skipped, chunk.existing, chunk.attempts) == ("done", 3, 3, 0, 2)
    assert Score.objects.count() == 3
    assert Abstention.objects.count() == 3
    scoring_pass = _refresh(scoring_pass)
    assert (scoring_pass.done, scoring_pass.written, scoring_pass.skipped, scoring_pass.existing) == (3, 3, 3, 0)


def test_a_chunk_done_twice_counts_once(planned):
    scoring_pass, chunks = planned
    assert chunk_score(chunk_id=chunks[0].pk, token="a") == "done"
    assert chunk_score(chunk_id=chunks[0].pk, token="a") == "skipped"
    assert chunk_score(chunk_id=chunks[0].pk, token="b") == "skipped"
    scoring_pass = _refresh(scoring_pass)
    assert (scoring_pass.done, scoring_pass.written, scoring_pass.chunks_done) == (3, 3, 1)


def test_a_chunk_held_by_a_live_claim_is_left_to_it(planned):
    _, chunks = planned
    ScoringChunk.objects.filter(pk=chunks[0].pk).update(
        status=ChunkStatus.RUNNING, token="other", lease_until=timezone.now() + timedelta(minutes=5)
    )
    assert chunk_score(chunk_id=chunks[0].pk, token="mine") == "skipped"
    assert not Score.objects.exists()
    assert _refresh(chunks[0]).token == "other"


def test_a_chunk_whose_lease_ran_out_is_taken_by_another_message(planned):
    scoring_pass, chunks = planned
    ScoringChunk.objects.filter(pk=chunks[0].pk).update(
        status=ChunkStatus.RUNNING, token="dead", lease_until=timezone.now() - timedelta(seconds=1)
    )
    assert chunk_score(chunk_id=chunks[0].pk, token="sweeper-sent") == "done"
    chunk = _refresh(chunks[0])
    assert (chunk.status, chunk.token, chunk.written) == ("done", "sweeper-sent", 3)


def test_a_task_that_lost_its_claim_rolls_its_batch_back(planned, monkeypatch):
    scoring_pass, chunks = planned
    real_write = passes.outcomes_write

    def stolen_meanwhile(**kwargs):
        # Our lease ran out while we scored, and another message took the chunk.
        ScoringChunk.objects.filter(pk=chunks[0].pk).update(token="thief")
        return real_write(**kwargs)

    monkeypatch.setattr(passes, "outcomes_write", stolen_meanwhile)
    assert chunk_score(chunk_id=chunks[0].pk, token="slow") == "skipped"
    assert not Score.objects.exists()
    assert not Abstention.objects.exists()
    assert _refresh(chunks[0]).written == 0


def test_a_pass_stores_its_batches_configs_before_their_writes_and_keeps_them_if_a_write_fails(
    actors, runs, monkeypatch
):
    from scoring.pipeline import writer

    body = {"scorers": ["answered", {"scorer": "latency_budget", "config": {"ms": 1000}}]}
    scoring_pass = pass_start(project=actors.acme, data=body, chunk_runs=3)
    pass_plan(pass_id=scoring_pass.pk)
    stored_by_writer = []
    real_store = writer.outcome_configs_store
    monkeypatch.setattr(writer, "outcome_configs_store", lambda *a: stored_by_writer.append(a) or real_store(*a))
    first, second = scoring_pass.chunks.order_by("ordinal")
    chunk_score(chunk_id=first.pk, token="a")
    assert stored_by_writer == []  # stored before the batch was handed to the writer
    hashes = set(Score.objects.values_list("config_hash", flat=True))
    assert len(hashes) == 2
    assert set(ScoreConfig.objects.filter(project=actors.acme).values_list("config_hash", flat=True)) == hashes

    def broken(**kwargs):
        raise RuntimeError("the disk is full")

    monkeypatch.setattr(passes, "outcomes_write", broken)
    ScoreConfig.objects.all().delete()
    with pytest.raises(RuntimeError):
        chunk_score(chunk_id=second.pk, token="b")
    assert Score.objects.filter(trace__in=second.trace_pks).count() == 0
    # Named by their hashes, configs stored without their scores harm nothing.
    assert set(ScoreConfig.objects.values_list("config_hash", flat=True)) == hashes


def test_the_chunk_that_finishes_last_marks_the_pass_done(planned):
    scoring_pass, chunks = planned
    chunk_score(chunk_id=chunks[1].pk, token="b")
    assert _refresh(scoring_pass).status == PassStatus.RUNNING
    chunk_score(chunk_id=chunks[0].pk, token="a")
    scoring_pass = _refresh(scoring_pass)
    assert (scoring_pass.status, scoring_pass.chunks_done, scoring_pass.done) == ("done", 2, 6)
    assert scoring_pass.finished_at is not None


def test_a_permanent_error_marks_the_pass_failed_with_the_error_text(planned, monkeypatch):
    scoring_pass, chunks = planned

    def broken(*args, **kwargs):
        raise ValueError("the scorer registry lost a scorer")

    monkeypatch.setattr(passes, "outcomes_compute", broken)
    with pytest.raises(ValueError):
        chunk_score(chunk_id=chunks[0].pk, token="a")
    scoring_pass = _refresh(scoring_pass)
    assert scoring_pass.status == PassStatus.FAILED
    assert "ValueError: the scorer registry lost a scorer" in scoring_pass.error
    assert scoring_pass.finished_at is not None
    monkeypatch.undo()
    # The other chunks of a failed pass do nothing.
    assert chunk_score(chunk_id=chunks[1].pk, token="b") == "skipped"
    assert not Score.objects.exists()


def test_a_transient_database_error_is_left_to_the_task_to_retry(planned, monkeypatch):
    scoring_pass, chunks = planned

    def flaky(*args, **kwargs):
        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(passes, "runs_load", flaky)
    with pytest.raises(OperationalError):
        chunk_score(chunk_id=chunks[0].pk, token="a")
    assert _refresh(scoring_pass).status == PassStatus.RUNNING
    monkeypatch.undo()
    # The retry carries the same task id, so it takes its chunk back at once.
    assert chunk_score(chunk_id=chunks[0].pk, token="a") == "done"


def test_a_stale_score_is_replaced_by_the_pass_never_duplicated(actors, runs):
    first = pass_start(project=actors.acme, data={"scorers": ["answered"]})
    pass_plan(pass_id=first.pk)
    chunk_score(chunk_id=ScoringChunk.objects.get(scoring_pass=first).pk, token="a")
    Score.objects.filter(trace__trace_id="run-2").update(value=0.0)
    Trace.objects.filter(trace_id="run-2").update(revision=2)  # the run changed since
    second = pass_start(project=actors.acme, data={"scorers": ["answered"]})
    pass_plan(pass_id=second.pk)
    chunk_score(chunk_id=ScoringChunk.objects.get(scoring_pass=second).pk, token="b")
    second = _refresh(second)
    assert (second.written, second.existing) == (1, 5)
    replaced = Score.objects.get(trace__trace_id="run-2")
    assert (replaced.run_revision, replaced.value, replaced.scoring_pass_id) == (2, 1.0, second.pk)
    assert Score.objects.count() == 6


def test_a_run_that_changes_while_it_is_scored_is_not_written_from_old_data(actors, runs, monkeypatch):
    scoring_pass = pass_start(project=actors.acme, data={"scorers": ["answered"], "trace_ids": ["run-1", "run-2"]})
    pass_plan(pass_id=scoring_pass.pk)
    real_compute = passes.outcomes_compute

    def late_span_arrives(*args, **kwargs):
        result = real_compute(*args, **kwargs)
        # What OTLP ingestion does when a late span arrives: a new span and a new revision.
        Span.objects.create(trace=Trace.objects.get(trace_id="run-1"), span_id="late", kind="tool", name="late")
        Trace.objects.filter(trace_id="run-1").update(revision=2)
        return result

    monkeypatch.setattr(passes, "outcomes_compute", late_span_arrives)
    chunk_score(chunk_id=ScoringChunk.objects.get(scoring_pass=scoring_pass).pk, token="a")
    assert list(Score.objects.values_list("trace__trace_id", flat=True)) == ["run-2"]
    skip = Abstention.objects.get()
    assert (skip.trace.trace_id, skip.kind, skip.reason) == ("run-1", "skipped", "run_changed")


def test_a_run_deleted_after_planning_is_simply_not_scored(planned):
    scoring_pass, chunks = planned
    Trace.objects.filter(pk=chunks[0].trace_pks[0]).delete()
    assert chunk_score(chunk_id=chunks[0].pk, token="a") == "done"
    assert _refresh(chunks[0]).written == 2


# --- the sweeper ------------------------------------------------------------------------


@pytest.fixture
def sent(monkeypatch):
    messages = []
    monkeypatch.setattr(
        "scoring.tasks.chunk_score_task.apply_async", lambda args, queue: messages.append(("chunk", args[0], queue))
    )
    monkeypatch.setattr(
        "scoring.tasks.pass_plan_task.apply_async", lambda args, queue: messages.append(("plan", args[0], queue))
    )
    return messages


def test_the_sweeper_sends_again_a_chunk_whose_worker_died_once_per_lease(planned, sent, settings):
    _, chunks = planned
    long_ago = timezone.now() - timedelta(seconds=settings.EVALSITE_CHUNK_LEASE_SECONDS + 5)
    ScoringChunk.objects.filter(pk=chunks[0].pk).update(
        status=ChunkStatus.RUNNING,
        token="dead",
        lease_until=timezone.now() - timedelta(seconds=1),
        dispatched_at=long_ago,
    )
    ScoringChunk.objects.filter(pk=chunks[1].pk).update(dispatched_at=timezone.now())
    assert passes_resume() == 1
    assert sent == [("chunk", chunks[0].pk, None)]
    assert passes_resume() == 0


def test_the_sweeper_leaves_a_live_chunk_alone(planned, sent):
    _, chunks = planned
    ScoringChunk.objects.update(dispatched_at=timezone.now() - timedelta(days=1))
    ScoringChunk.objects.filter(pk=chunks[0].pk).update(
        status=ChunkStatus.RUNNING, token="alive", lease_until=timezone.now() + timedelta(seconds=60)
    )
    ScoringPass.objects.update(progressed_at=timezone.now())
    assert passes_resume() == 0


def test_the_sweeper_sends_again_the_queued_chunks_of_a_pass_that_made_no_progress(planned, sent, settings):
    scoring_pass, chunks = planned
    long_ago = timezone.now() - timedelta(seconds=settings.EVALSITE_CHUNK_LEASE_SECONDS + 5)
    ScoringChunk.objects.update(dispatched_at=long_ago)
    ScoringPass.objects.filter(pk=scoring_pass.pk).update(progressed_at=long_ago, queue="scoring")
    assert passes_resume() == 2
    assert sorted(sent) == [("chunk", chunks[0].pk, "scoring"), ("chunk", chunks[1].pk, "scoring")]


def test_the_sweeper_sends_again_the_plan_of_a_pass_stuck_in_queued(actors, runs, sent, settings):
    scoring_pass = pass_start(project=actors.acme, data=BODY)
    assert passes_resume() == 0
    long_ago = timezone.now() - timedelta(seconds=settings.EVALSITE_CHUNK_LEASE_SECONDS + 5)
    ScoringPass.objects.filter(pk=scoring_pass.pk).update(progressed_at=long_ago)
    assert passes_resume() == 1
    assert sent == [("plan", scoring_pass.pk, None)]
    assert passes_resume() == 0


def test_planning_twice_creates_the_chunks_once(planned):
    scoring_pass, chunks = planned
    assert pass_plan(pass_id=scoring_pass.pk) == 0
    assert ScoringChunk.objects.filter(scoring_pass=scoring_pass).count() == len(chunks)


def test_a_chunk_stops_writing_once_its_pass_has_failed(planned, monkeypatch):
    scoring_pass, chunks = planned
    real_compute = passes.outcomes_compute

    def failed_meanwhile(*args, **kwargs):
        # Another chunk fails the pass while this one is scoring.
        passes.pass_fail(pass_id=scoring_pass.pk, error="chunk 1: ValueError: boom")
        return real_compute(*args, **kwargs)

    monkeypatch.setattr(passes, "outcomes_compute", failed_meanwhile)
    assert chunk_score(chunk_id=chunks[0].pk, token="a") == "skipped"
    assert not Score.objects.exists()
    assert _refresh(scoring_pass).error == "chunk 1: ValueError: boom"


def test_the_sweeper_fails_a_pass_run_by_a_request_that_died(actors, runs, settings):
    def request_pass(seconds_ago):
        return ScoringPass.objects.create(
            project=actors.acme,
            scorers=["answered"],
            selection={"limit": 10},
            background=False,
            status=PassStatus.RUNNING,
            progressed_at=timezone.now() - timedelta(seconds=seconds_ago),
        )

    abandoned = request_pass(settings.EVALSITE_REQUEST_TIMEOUT_SECONDS + 120)
    live = request_pass(1)
    passes_resume()
    abandoned.refresh_from_db()
    live.refresh_from_db()
    assert (abandoned.status, abandoned.error) == (
        PassStatus.FAILED,
        "the request that ran this pass ended before it finished",
    )
    assert live.status == PassStatus.RUNNING
