"""Celery entry points of failure groups: the tick every worker sends, and a full rebuild.

Each worker sends ``harvest.tick`` every ``EVALSITE_HARVEST_TICK_SECONDS`` from the
moment it is ready, to the first queue it reads (as the online rules' ticker does). A
tick builds or updates each project's groups (``harvest.services``): both are one
transaction under the project's state lock, so a tick killed midway is done again by
the next, and ticks on several workers at once wait for each other.
"""

from celery import shared_task
from django.conf import settings

from evalsite.background import RETRY, worker_timer
from harvest.services import groups_build, harvest_tick_all


@shared_task(name="harvest.tick", routine=True, **RETRY)
def harvest_tick_task():
    return {str(pk): list(outcome) for pk, outcome in harvest_tick_all().items()}


@shared_task(name="harvest.build", **RETRY)
def groups_build_task(project_id):
    return groups_build(project_id=project_id)


worker_timer(harvest_tick_task, every=lambda: settings.EVALSITE_HARVEST_TICK_SECONDS, queues="first")
