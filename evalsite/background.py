"""Crash-safe background work, in one place: what is retried, how long a lease lasts, the timers workers run.

Every piece of background work (a pass's chunks, a gate's evaluation, an online rule's
tick, retention, a monitor's evaluation) is built from these parts:

- ``TRANSIENT_ERRORS``: the database errors a retry can cure (a dropped connection, a
  restart, a deadlock victim). Tasks retry them with ``RETRY``'s backoff; anything else
  is final and the service records it.
- Leases: a holder takes a row by compare-and-set with a ``lease_until`` of ``lease()``
  (``EVALSITE_CHUNK_LEASE_SECONDS``) ahead, and ``renewed_while`` renews it from a thread
  of its own, on that thread's own database connection, every third of the lease. A
  step of any length (a slow judge call) keeps the lease; a process killed with SIGKILL
  stops renewing, its lease runs out and a sweep hands the row to another worker.
- Sweeps: ``worker_timer`` makes every worker send a task when it is ready (if asked)
  and then every few seconds, to the queues it reads: a sweep runs on any broker,
  including the filesystem one that never redelivers, with no scheduler to run.
  ``sweep_interval()`` (a quarter of the lease, 1 to 60 s) paces the sweeps of leased
  work, so a dead worker's row is sent again about a lease after its last renewal.
"""

import contextlib
import logging
import threading
from datetime import timedelta

from celery.signals import worker_ready
from django.conf import settings
from django.db import InterfaceError, OperationalError, connections

logger = logging.getLogger(__name__)

TRANSIENT_ERRORS = (OperationalError, InterfaceError)
RETRY = {"autoretry_for": TRANSIENT_ERRORS, "retry_backoff": 2, "retry_backoff_max": 60, "max_retries": 8}


def lease():
    return timedelta(seconds=settings.EVALSITE_CHUNK_LEASE_SECONDS)


def sweep_interval():
    """Seconds between two sweeps of leased work by one worker."""
    return max(1.0, min(60.0, settings.EVALSITE_CHUNK_LEASE_SECONDS / 4))


@contextlib.contextmanager
def renewed_while(renew, *, name, every=None):
    """Call ``renew()`` every ``every`` seconds (default a third of the lease) from a thread
    until the block ends or it returns falsy (the claim is lost); a renewal that fails on
    a database error is tried again at the next tick."""
    every = every or lease().total_seconds() / 3
    stop = threading.Event()

    def keep():
        try:
            while not stop.wait(every):
                try:
                    if not renew():
                        return
                except TRANSIENT_ERRORS as exc:
                    logger.warning("%s: lease renewal failed, trying again: %s", name, exc)
                    connections.close_all()  # this thread's; the next tick reconnects
        finally:
            connections.close_all()

    thread = threading.Thread(target=keep, name=name, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=10)


def worker_queues(consumer):
    """The queues a ready worker reads (the default queue when it names none), sorted."""
    task_consumer = getattr(consumer, "task_consumer", None)
    queues = sorted({q.name for q in task_consumer.queues}) if task_consumer else []
    return queues or [consumer.app.conf.task_default_queue]


def worker_timer(task, *, every, queues="all", at_start=False, queue_argument=False):
    """Make every worker send ``task`` every ``every()`` seconds once it is ready.

    ``queues``: ``"all"`` the queues it reads, ``"first"`` the first of them, ``"default"``
    the app's default queue. ``at_start`` sends once at once too; ``queue_argument``
    passes the queue to the task as ``queue`` (for work it starts in turn). A broker
    hiccup is logged and does not stop the timer: the next tick tries again.
    """

    def start(sender, **kwargs):
        consumer = sender
        targets = {
            "all": worker_queues(consumer),
            "first": worker_queues(consumer)[:1],
            "default": [consumer.app.conf.task_default_queue],
        }[queues]

        def send():
            for queue in targets:
                try:
                    task.apply_async(kwargs={"queue": queue} if queue_argument else None, queue=queue)
                except Exception:  # a broker hiccup must not stop the timer
                    logger.exception("could not send %s to %s", task.name, queue)

        if at_start:
            send()
        consumer.timer.call_repeatedly(every(), send)

    worker_ready.connect(start, weak=False, dispatch_uid=f"worker-timer:{task.name}")
    return start
