"""Worker entry points of the gate: thin wrappers over ``gating.evaluation``.

``experiments.gate_evaluate`` evaluates a gate too large for the request; it takes ids
only and is safe to run twice (the gate run is claimed by a lease, and a finished one
is left as it is). Transient database errors are retried with backoff. Each worker
also sends ``experiments.gate_runs_resume`` when it starts and then every
``sweep_interval()`` seconds, so a gate whose worker died is evaluated again.
"""

from celery import shared_task

from evalsite.background import RETRY, sweep_interval, worker_timer
from gating.evaluation import gate_evaluate, gate_send
from gating.gate_worker import gate_runs_resume


@shared_task(name="experiments.gate_evaluate", **RETRY)
def gate_evaluate_task(gate_run_id):
    gate_evaluate(gate_run_id=gate_run_id)


@shared_task(name="experiments.gate_runs_resume", routine=True, **RETRY)
def gate_runs_resume_task():
    return gate_runs_resume(send=gate_send)


worker_timer(gate_runs_resume_task, every=sweep_interval, at_start=True)
