"""Celery entry points of scoring passes: thin wrappers over ``scoring.passes.services``.

Every task takes ids only and is safe to run twice (see ``scoring.passes.services``), which is
what makes the global ``acks_late`` and ``reject_on_worker_lost`` settings safe: a
message whose worker died is delivered again and continues the pass. Transient
database errors are retried with backoff; anything else is final (the service has
marked the pass failed).

Each worker also sends ``scoring.passes_resume`` to its own queues when it starts and
then every ``sweep_interval()`` seconds, so work lost with a dead worker is sent again
on any broker, including the filesystem one that never redelivers; and
``scoring.feedback_pending_sweep`` every ``EVALSITE_RETENTION_SWEEP_SECONDS`` (an hour).
"""

import logging

from celery import shared_task
from celery.signals import worker_ready
from django.conf import settings

from scoring.feedback import feedback_pending_sweep
from scoring.passes.chunk_lease import sweep_interval
from scoring.passes.services import TRANSIENT_ERRORS, chunk_score, pass_plan, passes_resume
from scoring.passes.summaries import summaries_build

logger = logging.getLogger(__name__)

RETRY = {"autoretry_for": TRANSIENT_ERRORS, "retry_backoff": 2, "retry_backoff_max": 60, "max_retries": 8}


@shared_task(name="scoring.pass_plan", **RETRY)
def pass_plan_task(pass_id):
    return pass_plan(pass_id=pass_id)


@shared_task(name="scoring.chunk_score", bind=True, **RETRY)
def chunk_score_task(self, chunk_id):
    # The task id is the claim token: a retry or a redelivery of this same message
    # may take its chunk back at once; another message must wait for the lease.
    return chunk_score(chunk_id=chunk_id, token=self.request.id)


@shared_task(name="scoring.summaries_build", **RETRY)
def summaries_build_task(experiment_ids):
    summaries_build(experiment_ids)


@shared_task(name="scoring.passes_resume", routine=True, **RETRY)
def passes_resume_task():
    return passes_resume()


@shared_task(name="scoring.feedback_pending_sweep", routine=True, **RETRY)
def feedback_pending_sweep_task():
    return feedback_pending_sweep()


@worker_ready.connect
def feedback_sweeper_start(sender, **kwargs):
    """Send ``feedback_pending_sweep`` every ``EVALSITE_RETENTION_SWEEP_SECONDS`` to this worker's queue."""
    queue = sender.app.conf.task_default_queue

    def sweep():
        try:
            feedback_pending_sweep_task.apply_async(queue=queue)
        except Exception:  # a broker hiccup must not stop the timer; the next tick tries again
            logger.exception("could not send scoring.feedback_pending_sweep")

    sender.timer.call_repeatedly(settings.EVALSITE_RETENTION_SWEEP_SECONDS, sweep)


def worker_queues(consumer):
    """The queues a ready worker reads (the default queue when it names none), sorted."""
    task_consumer = getattr(consumer, "task_consumer", None)
    queues = sorted({q.name for q in task_consumer.queues}) if task_consumer else []
    return queues or [consumer.app.conf.task_default_queue]


@worker_ready.connect
def sweeper_start(sender, **kwargs):
    """Send ``passes_resume`` now and every ``sweep_interval()`` s to the queues this worker reads."""
    consumer = sender
    queues = worker_queues(consumer)

    def sweep():
        for queue in queues:
            try:
                passes_resume_task.apply_async(queue=queue)
            except Exception:  # a broker hiccup must not stop the timer; the next tick tries again
                logger.exception("could not send scoring.passes_resume to %s", queue)

    sweep()
    consumer.timer.call_repeatedly(sweep_interval(), sweep)
