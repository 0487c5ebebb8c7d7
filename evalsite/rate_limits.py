"""How many requests one sender may make per calendar minute, counted in the database.

``rate_take`` counts one request of ``bucket`` (a key and a client address, say) in the
current minute, or raises ``RateLimited`` (429 with ``Retry-After``) when the bucket
already made ``limit``. The count is a conditional update of one row per bucket and
minute, so it holds across every web process and machine without a lock; it commits
on its own (outside any transaction of the request), so refused and failed requests
count too.
"""

import hashlib
from datetime import timedelta

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from evalsite.errors import RateLimited
from evalsite.models import RateWindow
from evalsite.quota import seconds_to_next_window, window_start

# Past minutes are of no use; a few are kept for inspection.
KEEP_WINDOWS_FOR = timedelta(minutes=10)


def rate_bucket(*parts):
    """A fixed-size name for a sender (the parts may be long, or an address)."""
    return hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).hexdigest()


def rate_take(*, bucket, limit, what="requests", now=None):
    """Count one request of ``bucket`` this minute; ``RateLimited`` when it made ``limit`` already."""
    now = now or timezone.now()
    start = window_start(now)
    if _count_one(bucket, start, limit):
        return
    if not RateWindow.objects.filter(bucket=bucket, window_start=start).exists():
        try:
            with transaction.atomic():
                RateWindow.objects.create(bucket=bucket, window_start=start, used=1)
            RateWindow.objects.filter(window_start__lt=start - KEEP_WINDOWS_FOR).delete()
            return
        except IntegrityError:
            # Another process opened the minute first: count there.
            if _count_one(bucket, start, limit):
                return
    raise RateLimited(
        f"Over the limit of {limit} {what} per minute from this key and address; retry after the minute.",
        retry_after=seconds_to_next_window(now),
    )


def _count_one(bucket, start, limit):
    return RateWindow.objects.filter(bucket=bucket, window_start=start, used__lt=limit).update(used=F("used") + 1)
