"""Celery entry points of online rules: a tick of every rule, and a rule's backfill.

Each worker sends ``online.rules_tick`` every ``EVALSITE_ONLINE_TICK_SECONDS`` from the
moment it is ready, to the first queue it reads, where the passes it starts go too (no
separate scheduler to run). Ticks are safe to run at once on
several workers: each rule is ticked under its row lock and records each run once.
"""

from celery import shared_task
from django.conf import settings
from django.utils.dateparse import parse_datetime

from evalsite.background import RETRY, worker_timer
from online.rules import rule_backfill, rules_tick


@shared_task(name="online.rules_tick", routine=True, **RETRY)
def rules_tick_task(queue=""):
    return rules_tick(queue=queue)


@shared_task(name="online.rule_backfill", **RETRY)
def rule_backfill_task(rule_id, started_from, started_to):
    return rule_backfill(
        rule_id=rule_id, started_from=parse_datetime(started_from), started_to=parse_datetime(started_to)
    )


# The tick, and the passes it starts, go to a queue this worker reads.
worker_timer(rules_tick_task, every=lambda: settings.EVALSITE_ONLINE_TICK_SECONDS, queues="first", queue_argument=True)
