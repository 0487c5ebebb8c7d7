"""Worker entry points of whole-project jobs.

Each worker sends ``experiments.retention_sweep`` (its queued name from before this
package had its own home) every ``EVALSITE_RETENTION_SWEEP_SECONDS`` (an hour): expired
runs are deleted in bounded batches (``lifecycle.retention``). Transient database errors
are retried with backoff.
"""

from celery import shared_task
from django.conf import settings

from evalsite.background import RETRY, worker_timer
from lifecycle.retention import retention_sweep


@shared_task(name="experiments.retention_sweep", routine=True, **RETRY)
def retention_sweep_task():
    return retention_sweep()


worker_timer(retention_sweep_task, every=lambda: settings.EVALSITE_RETENTION_SWEEP_SECONDS, queues="default")
