"""Reads of monitors, alerts and deliveries, scoped to the project: 404 for missing and not yours."""

from datasets.models import Trace
from evalsite.errors import NotFound
from monitors.models import Alert, Delivery, Monitor


def monitor_list(*, project):
    return Monitor.objects.filter(project=project).order_by("name", "pk")


def monitor_get(*, project, monitor_id):
    monitor = Monitor.objects.filter(project=project, pk=monitor_id).first()
    if monitor is None:
        raise NotFound(f"No monitor {monitor_id} in this project.")
    return monitor


def alert_list(*, monitor):
    return Alert.objects.filter(monitor=monitor).order_by("-at", "-id")


def alert_get(*, project, alert_id):
    alert = Alert.objects.select_related("monitor").filter(monitor__project=project, pk=alert_id).first()
    if alert is None:
        raise NotFound(f"No alert {alert_id} in this project.")
    return alert


def alert_runs(alert):
    """The runs that drove the alert, oldest first (those deleted since are gone)."""
    return Trace.objects.filter(project_id=alert.monitor.project_id, pk__in=alert.run_ids).order_by("pk")


def alert_runs_listed(alert):
    """``alert_runs`` with only the columns the alert page lists."""
    return alert_runs(alert).only("pk", "trace_id", "name", "status", "started_at", "latency_ms", "cost_cents")


def delivery_list(*, monitor, limit=50):
    return Delivery.objects.filter(monitor=monitor).select_related("alert").order_by("-created_at", "-id")[:limit]
