"""Celery entry points of monitors: beat sends ``monitors.evaluate_all`` every minute.

It fans out one ``monitors.evaluate`` per monitor not paused, so one slow window does
not hold the others. Both are safe to run twice (``monitors.evaluation``).
"""

from celery import shared_task

from monitors.evaluation import monitor_evaluate, monitors_due
from scoring.passes import TRANSIENT_ERRORS

RETRY = {"autoretry_for": TRANSIENT_ERRORS, "retry_backoff": 2, "retry_backoff_max": 60, "max_retries": 5}


@shared_task(name="monitors.evaluate_all", **RETRY)
def monitors_evaluate_all_task():
    for monitor_id in monitors_due():
        monitor_evaluate_task.delay(monitor_id)


@shared_task(name="monitors.evaluate", **RETRY)
def monitor_evaluate_task(monitor_id):
    alert = monitor_evaluate(monitor_id=monitor_id)
    return alert.pk if alert else None
