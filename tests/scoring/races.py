"""Helpers of the PostgreSQL race tests: work on a thread of its own, and waiting for a lock."""

import threading
import time

from django.db import connection, connections


def in_thread(work):
    """Start ``work()`` on a thread with its own connection; ``(thread, errors)``, errors filled as they happen."""
    errors = []

    def run():
        try:
            work()
        except Exception as exc:  # reported to the test
            errors.append(exc)
        finally:
            connections.close_all()

    thread = threading.Thread(target=run)
    thread.start()
    return thread, errors


def until_a_session_waits(what, *, wait_event=None, timeout=30):
    """Return once another session waits on a lock (``wait_event``: of that kind only); fail after ``timeout`` s."""
    sql = "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
    params = []
    if wait_event:
        sql += " AND wait_event = %s"
        params.append(wait_event)
    deadline = time.monotonic() + timeout
    with connection.cursor() as cursor:
        while True:
            cursor.execute("SELECT pg_stat_clear_snapshot()")  # read afresh inside a transaction
            cursor.execute(sql, params)
            if cursor.fetchone()[0]:
                return
            assert time.monotonic() < deadline, what
            time.sleep(0.02)
