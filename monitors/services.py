"""Changes to monitors that people make: open an alert's runs as a queue (more below)."""

from scoring.queue import queue_for_runs


def alert_queue_open(*, alert, by=None):
    """The annotation queue of exactly the runs that drove ``alert`` (created on first use, idempotent)."""
    name = f"Alert {alert.pk}: {alert.monitor.name}"
    return queue_for_runs(project=alert.monitor.project, name=name, run_ids=alert.run_ids, by=by)
