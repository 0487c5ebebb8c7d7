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

from celery import shared_task
from django.conf import settings

from evalsite.background import RETRY, sweep_interval, worker_timer
from scoring.feedback import feedback_pending_sweep
from scoring.passes.services import chunk_score, pass_plan, passes_resume
from scoring.passes.summaries import summaries_build


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


worker_timer(passes_resume_task, every=sweep_interval, at_start=True)
worker_timer(feedback_pending_sweep_task, every=lambda: settings.EVALSITE_RETENTION_SWEEP_SECONDS, queues="default")
