"""Worker entry points of the experiments app: thin wrappers over ``experiments.gating``.

``experiments.gate_evaluate`` evaluates a gate too large for the request; it takes ids
only and is safe to run twice (the gate run is claimed by a lease, and a finished one
is left as it is). Transient database errors are retried with backoff. Each worker
also sends ``experiments.gate_runs_resume`` when it starts and then every
``sweep_interval()`` seconds, so a gate whose worker died is evaluated again, and
``experiments.retention_sweep`` every ``EVALSITE_RETENTION_SWEEP_SECONDS`` (an hour):
expired runs are deleted in bounded batches (``experiments.retention``).
"""

import logging

from celery import shared_task
from celery.signals import worker_ready
from django.conf import settings

from experiments.gate_worker import gate_runs_resume, sweep_interval
from experiments.gating import gate_evaluate, gate_send
from experiments.retention import retention_sweep
from scoring.passes import TRANSIENT_ERRORS

logger = logging.getLogger(__name__)

RETRY = {"autoretry_for": TRANSIENT_ERRORS, "retry_backoff": 2, "retry_backoff_max": 60, "max_retries": 8}


@shared_task(name="experiments.gate_evaluate", **RETRY)
def gate_evaluate_task(gate_run_id):
    gate_evaluate(gate_run_id=gate_run_id)


@shared_task(name="experiments.gate_runs_resume", routine=True, **RETRY)
def gate_runs_resume_task():
    return gate_runs_resume(send=gate_send)


@shared_task(name="experiments.retention_sweep", routine=True, **RETRY)
def retention_sweep_task():
    return retention_sweep()


@worker_ready.connect
def retention_sweeper_start(sender, **kwargs):
    """Send ``retention_sweep`` every ``EVALSITE_RETENTION_SWEEP_SECONDS`` to this worker's queue."""
    queue = sender.app.conf.task_default_queue

    def sweep():
        try:
            retention_sweep_task.apply_async(queue=queue)
        except Exception:  # a broker hiccup must not stop the timer; the next tick tries again
            logger.exception("could not send experiments.retention_sweep")

    sender.timer.call_repeatedly(settings.EVALSITE_RETENTION_SWEEP_SECONDS, sweep)


@worker_ready.connect
def gate_sweeper_start(sender, **kwargs):
    """Send ``gate_runs_resume`` now and every ``sweep_interval()`` s to the queues this worker reads."""
    consumer = sender
    task_consumer = getattr(consumer, "task_consumer", None)
    queues = sorted({q.name for q in task_consumer.queues}) if task_consumer else []
    queues = queues or [consumer.app.conf.task_default_queue]

    def sweep():
        for queue in queues:
            try:
                gate_runs_resume_task.apply_async(queue=queue)
            except Exception:  # a broker hiccup must not stop the timer; the next tick tries again
                logger.exception("could not send experiments.gate_runs_resume to %s", queue)

    sweep()
    consumer.timer.call_repeatedly(sweep_interval(), sweep)
