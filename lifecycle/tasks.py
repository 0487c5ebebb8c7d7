"""Worker entry points of whole-project jobs.

Each worker sends ``experiments.retention_sweep`` (its queued name from before this
package had its own home) every ``EVALSITE_RETENTION_SWEEP_SECONDS`` (an hour): expired
runs are deleted in bounded batches (``lifecycle.retention``). ``lifecycle.export_run``
writes one project export (``lifecycle.exports``); every worker sends
``lifecycle.exports_sweep`` at start and every ``sweep_interval()`` to its first
queue, which hands the job of a dead worker to another and removes old export files.
Transient database errors are retried with backoff.
"""

from celery import shared_task
from django.conf import settings

from evalsite.background import RETRY, sweep_interval, worker_timer
from lifecycle.exports import export_run, exports_sweep
from lifecycle.retention import retention_sweep


@shared_task(name="experiments.retention_sweep", routine=True, **RETRY)
def retention_sweep_task():
    return retention_sweep()


@shared_task(name="lifecycle.export_run", **RETRY)
def export_run_task(job_id):
    return export_run(job_id)


@shared_task(name="lifecycle.exports_sweep", routine=True, **RETRY)
def exports_sweep_task():
    return exports_sweep()


worker_timer(retention_sweep_task, every=lambda: settings.EVALSITE_RETENTION_SWEEP_SECONDS, queues="default")
worker_timer(exports_sweep_task, every=sweep_interval, queues="first", at_start=True)
