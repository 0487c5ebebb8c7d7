"""A score never outlives its run, though the score table has no foreign key to runs.

The race: a writer holds its lock on a run and writes a score; meanwhile the run is
deleted. Django's cascade deletes the run's scores first (it cannot see the writer's
uncommitted one), then waits on the run's lock. Once the writer commits, the deletion
goes on, and the trigger deletes the score the cascade missed.
"""

import threading

import pytest
from django.db import connection, connections, transaction

from datasets.models import Trace
from lifecycle.retention import retention_batch
from scoring.models import Score
from tests.factories import trace_create
from tests.scoring.races import in_thread, until_a_session_waits

pytestmark = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="the race needs concurrent writers: PostgreSQL (DATABASE_URL)"
)


def _race(run, delete):
    """Write a score for ``run`` under its lock while ``delete()`` runs; returns the deleter's error, if any."""
    written, release = threading.Event(), threading.Event()

    def writer():
        try:
            with transaction.atomic():
                Trace.objects.select_for_update(no_key=True).get(pk=run.pk)
                Score.objects.create(
                    project=run.project, trace=run, scorer="answered", config_hash="h", value=1.0, passed=True
                )
                written.set()
                release.wait(30)
        finally:
            connections.close_all()

    writing = threading.Thread(target=writer)
    writing.start()
    assert written.wait(30)
    deleting, errors = in_thread(delete)
    until_a_session_waits("the deletion never waited on the writer's lock")
    release.set()
    for thread in (writing, deleting):
        thread.join(30)
    return errors


def test_a_run_deleted_while_a_writer_holds_it_leaves_no_score(transactional_db, actors):
    run = trace_create(actors.acme, "deleted-while-scored")
    errors = _race(run, lambda: Trace.objects.filter(pk=run.pk).delete())
    assert errors == []
    assert not Trace.objects.filter(pk=run.pk).exists()
    assert not Score.objects.filter(trace_id=run.pk).exists()


def test_retention_deleting_a_run_being_scored_leaves_no_score(transactional_db, actors):
    acme = actors.acme
    acme.retention_days = 1
    acme.save()
    run = trace_create(acme, "expired-while-scored")
    Trace.objects.filter(pk=run.pk).update(ingested_at=run.ingested_at.replace(year=2000))
    errors = _race(run, lambda: retention_batch(project=acme))
    assert errors == []
    assert not Trace.objects.filter(pk=run.pk).exists()
    assert not Score.objects.filter(trace_id=run.pk).exists()


def test_scores_of_other_runs_are_left_alone(transactional_db, actors):
    kept, deleted = trace_create(actors.acme, "kept"), trace_create(actors.acme, "deleted")
    for run in (kept, deleted):
        Score.objects.create(project=run.project, trace=run, scorer="answered", config_hash="h", value=1, passed=True)
    Trace.objects.filter(pk=deleted.pk).delete()
    assert list(Score.objects.values_list("trace_id", flat=True)) == [kept.pk]
