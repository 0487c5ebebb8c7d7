"""A pass run outside a transaction writes its batches on the process's writer thread,
which keeps its own database connection for the next pass until it is stopped."""

import threading
import time

from django.db import connection

from scoring.models import Score, ScoringChunk
from scoring.passes.batch_writer import writer_stop
from scoring.passes.services import chunk_score, pass_plan, pass_start
from tests.base import actors_create
from tests.factories import trace_create


def _writer_threads():
    return [t for t in threading.enumerate() if t.name.startswith("scoring-writer")]


def _other_sessions():
    if connection.vendor != "postgresql":
        return set()
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        return {pid for (pid,) in cursor.fetchall()}


def _until_gone(pids, timeout=10):
    # A backend ends a moment after its client closes the connection.
    deadline = time.monotonic() + timeout
    while pids & _other_sessions() and time.monotonic() < deadline:
        time.sleep(0.05)
    return pids & _other_sessions()


def test_stopping_the_writer_thread_closes_its_connection(transactional_db):
    actors = actors_create()
    for i in range(4):
        trace_create(actors.acme, f"run-{i}")
    before = _other_sessions()
    scoring_pass = pass_start(project=actors.acme, data={"scorers": ["answered"]}, chunk_runs=4)
    pass_plan(pass_id=scoring_pass.pk)
    assert chunk_score(chunk_id=ScoringChunk.objects.get(scoring_pass=scoring_pass).pk, token="t") == "done"
    assert Score.objects.filter(scoring_pass=scoring_pass).count() == 4
    assert len(_writer_threads()) == 1
    writer = _other_sessions() - before
    assert len(writer) == (1 if connection.vendor == "postgresql" else 0)

    writer_stop()

    assert _writer_threads() == []
    assert _until_gone(writer) == set()
