"""The monitors' pages: an alert with the runs that drove it, opened as an annotation queue."""

from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from monitors.selectors import alert_get, alert_runs
from monitors.services import alert_queue_open
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
