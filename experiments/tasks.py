"""Worker entry points of the experiments app."""

from celery import shared_task

from experiments.gating import gate_evaluate


@shared_task(name="experiments.gate_evaluate")
def gate_evaluate_task(gate_run_id):
    """Evaluate a gate run too large for the request (idempotent: a finished run is left as it is)."""
    gate_evaluate(gate_run_id=gate_run_id)
