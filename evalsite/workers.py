"""Worker liveness, as seen from the database.

Every worker process records a heartbeat (its Celery hostname and the time) when it is
ready and then every ``EVALSITE_HEARTBEAT_SECONDS``, from a thread of its own
(``heartbeats_start``), so ``/healthz`` lists the workers that are alive and can reach
the database. A beat that fails (the database is away) is logged and tried again at
the next tick.
"""

import logging
import threading
import time

from django.conf import settings
from django.db import connections
from django.utils import timezone

from evalsite.models import Heartbeat

logger = logging.getLogger(__name__)


def heartbeat_record(*, hostname):
    Heartbeat.objects.update_or_create(hostname=hostname, defaults={"seen_at": timezone.now()})
    return hostname


def heartbeats_start(*, hostname):
    """Record a heartbeat now and every ``EVALSITE_HEARTBEAT_SECONDS`` from a daemon thread; returns it."""

    def beat_forever():
        every = settings.EVALSITE_HEARTBEAT_SECONDS
        while True:
            try:
                heartbeat_record(hostname=hostname)
            except Exception as exc:  # the database may be away: the next tick tries again
                logger.warning("heartbeat of %s not recorded: %s", hostname, exc)
            finally:
                connections.close_all()  # this thread's: one short connection per beat
            time.sleep(every)

    thread = threading.Thread(target=beat_forever, name="heartbeat", daemon=True)
    thread.start()
    return thread
