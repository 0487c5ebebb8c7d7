"""Celery entry points of failure groups: the tick every worker sends, and a full rebuild.

Each worker sends ``harvest.tick`` every ``EVALSITE_HARVEST_TICK_SECONDS`` from the
moment it is ready, to the first queue it reads (as the online rules' ticker does). A
tick builds or updates each project's groups (``harvest.services``): both are one
transaction under the project's state lock, so a tick killed midway is done again by
the next, and ticks on several workers at once wait for each other.
"""

import logging

from celery import shared_task
from celery.signals import worker_ready
from django.conf import settings

from harvest.services import groups_build, harvest_tick_all
from scoring.passes import TRANSIENT_ERRORS
from scoring.tasks import worker_queues

logger = logging.getLogger(__name__)

RETRY = {"autoretry_for": TRANSIENT_ERRORS, "retry_backoff": 2, "retry_backoff_max": 60, "max_retries": 8}


@shared_task(name="harvest.tick", routine=True, **RETRY)
def harvest_tick_task():
    return {str(pk): list(outcome) for pk, outcome in harvest_tick_all().items()}


@shared_task(name="harvest.build", **RETRY)
def groups_build_task(project_id):
    return groups_build(project_id=project_id)


@worker_ready.connect
def harvest_ticker_start(sender, **kwargs):
    consumer = sender
    queue = worker_queues(consumer)[0]

    def tick():
        try:
            harvest_tick_task.apply_async(queue=queue)
        except Exception:  # a broker hiccup must not stop the timer; the next tick tries again
            logger.exception("could not send harvest.tick")

    consumer.timer.call_repeatedly(settings.EVALSITE_HARVEST_TICK_SECONDS, tick)
