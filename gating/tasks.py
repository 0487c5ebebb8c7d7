"""Worker entry points of the gate: thin wrappers over ``gating.evaluation``.

``experiments.gate_evaluate`` evaluates a gate too large for the request; it takes ids
only and is safe to run twice (the gate run is claimed by a lease, and a finished one
is left as it is). Transient database errors are retried with backoff. Each worker
also sends ``experiments.gate_runs_resume`` when it starts and then every
``sweep_interval()`` seconds, so a gate whose worker died is evaluated again.
"""

import logging

from celery import shared_task
from celery.signals import worker_ready

from gating.evaluation import gate_evaluate, gate_send
from gating.gate_worker import gate_runs_resume, sweep_interval
from scoring.passes.services import TRANSIENT_ERRORS

logger = logging.getLogger(__name__)

RETRY = {"autoretry_for": TRANSIENT_ERRORS, "retry_backoff": 2, "retry_backoff_max": 60, "max_retries": 8}


@shared_task(name="experiments.gate_evaluate", **RETRY)
def gate_evaluate_task(gate_run_id):
    gate_evaluate(gate_run_id=gate_run_id)


@shared_task(name="experiments.gate_runs_resume", routine=True, **RETRY)
def gate_runs_resume_task():
    return gate_runs_resume(send=gate_send)


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
