"""Answers that belong to no app: the health check and the error pages (problem+json under the API)."""

from datetime import timedelta

from django.db import connection
from django.http import JsonResponse
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt

from evalsite.errors import problem_response
from evalsite.models import Heartbeat

WORKER_FRESH_FOR = timedelta(minutes=5)


def health(request):
    """Liveness for load balancers: the database answers; workers seen recently are listed."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    recent = Heartbeat.objects.filter(seen_at__gte=timezone.now() - WORKER_FRESH_FOR)
    return JsonResponse({"status": "ok", "database": connection.vendor, "workers": [h.hostname for h in recent]})


def _is_api(request):
    return request.path.startswith("/v1/")


# Exempt: a request under /v1/ that matches no endpoint (PATCH /v1/api/cases/abc) must
# get the API's 404, not the CSRF middleware's HTML 403. The view changes nothing.
@csrf_exempt
def not_found(request, exception=None):
    if _is_api(request):
        return problem_response(404, "Not found", f"No API endpoint at {request.path}.", code="not-found")
    return render(request, "404.html", status=404)


def server_error(request):
    if _is_api(request):
        return problem_response(500, "Internal server error", "The server failed; the error was logged.")
    return render(request, "500.html", status=500)
