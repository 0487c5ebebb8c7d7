"""Celery entry points of monitors: beat sends ``monitors.evaluate_all`` every minute.

It fans out one ``monitors.evaluate`` per monitor not paused, so one slow window does
not hold the others. Both are safe to run twice (``monitors.evaluation``).
``monitors.deliver`` sends one webhook delivery, retried with exponential backoff on a
transient failure, ``DELIVERY_TRIES`` attempts at most (``monitors.webhooks``).
"""

from celery import shared_task
from django.conf import settings

from evalsite.background import RETRY as BACKGROUND_RETRY
from evalsite.background import TRANSIENT_ERRORS
from monitors.evaluation import monitor_evaluate, monitors_due
from monitors.webhooks import DELIVER_TASK, DELIVERY_TRIES, DeliveryFailed, delivery_send

RETRY = {**BACKGROUND_RETRY, "max_retries": 5}


@shared_task(name="monitors.evaluate_all", **RETRY)
def monitors_evaluate_all_task():
    for monitor_id in monitors_due():
        monitor_evaluate_task.delay(monitor_id)


@shared_task(name="monitors.evaluate", **RETRY)
def monitor_evaluate_task(monitor_id):
    alert = monitor_evaluate(monitor_id=monitor_id)
    return alert.pk if alert else None


@shared_task(
    name=DELIVER_TASK,
    autoretry_for=(DeliveryFailed, *TRANSIENT_ERRORS),
    retry_backoff=settings.EVALSITE_WEBHOOK_BACKOFF_SECONDS,
    retry_backoff_max=600,
    retry_jitter=False,
    max_retries=DELIVERY_TRIES - 1,
)
def delivery_send_task(delivery_id):
    return delivery_send(delivery_id=delivery_id)
