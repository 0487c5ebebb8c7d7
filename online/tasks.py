"""Celery entry points of online rules: a tick of every rule, and a rule's backfill.

Each worker sends ``online.rules_tick`` every ``EVALSITE_ONLINE_TICK_SECONDS`` from the
moment it is ready, to the first queue it reads, where the passes it starts go too (no
separate scheduler to run). Ticks are safe to run at once on
several workers: each rule is ticked under its row lock and records each run once.
"""

import logging

from celery import shared_task
from celery.signals import worker_ready
from django.conf import settings
from django.utils.dateparse import parse_datetime

from online.rules import rule_backfill, rules_tick
from scoring.passes.services import TRANSIENT_ERRORS
from scoring.tasks import worker_queues

logger = logging.getLogger(__name__)

RETRY = {"autoretry_for": TRANSIENT_ERRORS, "retry_backoff": 2, "retry_backoff_max": 60, "max_retries": 8}


@shared_task(name="online.rules_tick", routine=True, **RETRY)
def rules_tick_task(queue=""):
    return rules_tick(queue=queue)


@shared_task(name="online.rule_backfill", **RETRY)
def rule_backfill_task(rule_id, started_from, started_to):
    return rule_backfill(
        rule_id=rule_id, started_from=parse_datetime(started_from), started_to=parse_datetime(started_to)
    )


@worker_ready.connect
def online_ticker_start(sender, **kwargs):
    consumer = sender
    # The tick, and the passes it starts, go to a queue this worker reads.
    queue = worker_queues(consumer)[0]

    def tick():
        try:
            rules_tick_task.apply_async(kwargs={"queue": queue}, queue=queue)
        except Exception:  # a broker hiccup must not stop the timer; the next tick tries again
            logger.exception("could not send online.rules_tick")

    consumer.timer.call_repeatedly(settings.EVALSITE_ONLINE_TICK_SECONDS, tick)
