"""Span and log exports of the same runs, one at a time: a lock per (project, trace id).

A log record and its span often arrive at the same moment (the SDK flushes both
processors on similar schedules). Without a common lock, a logs export could look for
the span while the spans export that creates it is still uncommitted (and so invisible),
and the spans export could look for the records before the logs export commits: each
would miss the other. Both take these locks first, in sorted order, so one waits for the
other and the second sees what the first wrote.

PostgreSQL: transaction-scoped advisory locks, released at commit or rollback. SQLite
serialises writing transactions anyway (IMMEDIATE), so nothing is needed there.
"""

import hashlib

from django.db import connection

from evalsite.vendor import is_postgresql


def traces_lock(project, trace_ids):
    """Take the export locks of these runs, held until the end of the current transaction."""
    if not is_postgresql() or not trace_ids:
        return
    keys = sorted({_key(project.pk, trace_id) for trace_id in trace_ids})
    with connection.cursor() as cursor:
        # unnest yields the sorted keys in order, so every export locks in the same order.
        cursor.execute("SELECT count(pg_advisory_xact_lock(k)) FROM unnest(%s::bigint[]) AS k", [keys])


def _key(project_pk, trace_id):
    digest = hashlib.sha256(f"otlp:{project_pk}:{trace_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)
