"""The monitors' pages: a monitor with its alerts and webhook deliveries, and an alert
with the runs that drove it, opened as an annotation queue. Viewers read; admins send a
test message; reviewers open an alert's runs as a queue."""

from django.contrib import messages
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from evalsite.models import Role
from monitors.selectors import alert_get, alert_list, alert_runs, delivery_list, monitor_get
from monitors.services import alert_queue_open
from monitors.webhooks import webhook_test_send
from web.pages.access import page_render, project_page


@project_page
def alert_page(request, project, alert_id):
    alert = alert_get(project=project, alert_id=alert_id)
    runs = alert_runs(alert).only("pk", "trace_id", "name", "status", "started_at", "latency_ms", "cost_cents")
    return page_render(request, "monitors/alert.html", {"alert": alert, "monitor": alert.monitor, "runs": runs})


@require_POST
@project_page
def alert_queue(request, project, alert_id):
    """Reviewers open the alert's runs as a queue (created once, then reused)."""
    queue = alert_queue_open(alert=alert_get(project=project, alert_id=alert_id), by=request.user)
    return redirect("queue", slug=project.slug, queue_id=queue.pk)


@project_page(change_role=Role.ADMIN)
def monitor_page(request, project, monitor_id):
    monitor = monitor_get(project=project, monitor_id=monitor_id)
    context = {
        "monitor": monitor,
        "alerts": alert_list(monitor=monitor)[:50],
        "deliveries": delivery_list(monitor=monitor),
        "can_change": request.membership.allows(Role.ADMIN),
    }
    return page_render(request, "monitors/monitor.html", context)


@require_POST
@project_page(change_role=Role.ADMIN)
def monitor_test_send(request, project, monitor_id):
    monitor = monitor_get(project=project, monitor_id=monitor_id)
    sent = webhook_test_send(monitor=monitor)
    if sent:
        messages.success(request, f"A test message is on its way to {len(sent)} webhook(s); see the delivery log.")
    else:
        messages.error(request, "This monitor has no webhook URL to send a test to.")
    return redirect("monitor", slug=project.slug, monitor_id=monitor.pk)
