"""Worker entry points of whole-project jobs.

Each worker sends ``experiments.retention_sweep`` (its queued name from before this
package had its own home) every ``EVALSITE_RETENTION_SWEEP_SECONDS`` (an hour): expired
runs are deleted in bounded batches (``lifecycle.retention``). Transient database errors
are retried with backoff.
"""

import logging

from celery import shared_task
from celery.signals import worker_ready
from django.conf import settings

from lifecycle.retention import retention_sweep
from scoring.passes.services import TRANSIENT_ERRORS

logger = logging.getLogger(__name__)

RETRY = {"autoretry_for": TRANSIENT_ERRORS, "retry_backoff": 2, "retry_backoff_max": 60, "max_retries": 8}


@shared_task(name="experiments.retention_sweep", routine=True, **RETRY)
def retention_sweep_task():
    return retention_sweep()


@worker_ready.connect
def retention_sweeper_start(sender, **kwargs):
    """Send ``retention_sweep`` every ``EVALSITE_RETENTION_SWEEP_SECONDS`` to this worker's queue."""
    queue = sender.app.conf.task_default_queue

    def sweep():
        try:
            retention_sweep_task.apply_async(queue=queue)
        except Exception:  # a broker hiccup must not stop the timer; the next tick tries again
            logger.exception("could not send experiments.retention_sweep")

    sender.timer.call_repeatedly(settings.EVALSITE_RETENTION_SWEEP_SECONDS, sweep)
