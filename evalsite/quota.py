"""The per-project ceiling on records written per minute (runs and scores).

Windows are calendar minutes in UTC. ``quota_reserve`` must be called inside the
transaction that writes the records: it locks the project's row for the current minute
(``SELECT ... FOR UPDATE`` on PostgreSQL; SQLite's IMMEDIATE transactions already hold
the database's write lock), so concurrent writers in any number of processes queue on
it and the count is exact. If the writing transaction rolls back, so does the
reservation: a failed write never uses up quota.
"""

import math
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from evalsite.errors import QuotaExceeded
from evalsite.metrics import QUOTA_REFUSALS
from evalsite.models import QuotaWindow

WINDOW = timedelta(minutes=1)
# Old windows are deleted as new ones are opened; a day is kept for inspection.
KEEP_WINDOWS_FOR = timedelta(days=1)


def window_start(now):
    return now.replace(second=0, microsecond=0)


def seconds_to_next_window(now):
    """Whole seconds until the next window opens (at least 1), for ``Retry-After``."""
    remaining = (window_start(now) + WINDOW - now).total_seconds()
    return max(1, math.ceil(remaining))


def quota_reserve(*, project, count, partial=False, now=None):
    """Reserve ``count`` records of the project's current window; return how many were granted.

    All or nothing by default: if ``count`` does not fit, raises ``QuotaExceeded`` and
    reserves nothing. With ``partial=True`` grants as many as fit (possibly 0) instead
    of raising; the caller writes only that many and reports the rest as skipped.
    A project with ``quota_per_minute == 0`` has no ceiling and is always granted.
    """
    if count <= 0 or project.quota_per_minute == 0:
        return max(count, 0)
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("quota_reserve must run inside the transaction that writes the records")
    now = now or timezone.now()
    start = window_start(now)
    limit = project.quota_per_minute
    window = _locked_window(project, start)
    available = max(0, limit - window.used)
    granted = min(count, available)
    if granted < count:
        # Counted now, not on commit: the refusal happened whatever the caller does next.
        QUOTA_REFUSALS.labels(project=project.slug).inc(count if not partial else count - granted)
    if granted < count and not partial:
        raise QuotaExceeded(
            f"Writing {count} records would take project '{project.slug}' over its quota of "
            f"{limit} per minute ({window.used} already written this minute). Nothing was written.",
            retry_after=seconds_to_next_window(now),
        )
    if granted:
        QuotaWindow.objects.filter(pk=window.pk).update(used=window.used + granted)
    return granted


def quota_remaining(*, project, now=None):
    """Records the project may still write this minute (``None`` for no ceiling). Not a reservation."""
    if project.quota_per_minute == 0:
        return None
    start = window_start(now or timezone.now())
    used = QuotaWindow.objects.filter(project=project, window_start=start).values_list("used", flat=True).first()
    return max(0, project.quota_per_minute - (used or 0))


def _locked_window(project, start):
    window = QuotaWindow.objects.select_for_update().filter(project=project, window_start=start).first()
    if window is not None:
        return window
    # First writer of the minute: create the row (a concurrent creator makes this a
    # no-op), then lock it like everyone else. Old rows go at the same time.
    QuotaWindow.objects.bulk_create([QuotaWindow(project=project, window_start=start, used=0)], ignore_conflicts=True)
    QuotaWindow.objects.filter(project=project, window_start__lt=start - KEEP_WINDOWS_FOR).delete()
    return QuotaWindow.objects.select_for_update().get(project=project, window_start=start)
