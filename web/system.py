"""Answers that belong to no app: the health check and the error pages (problem+json under the API).

A database that cannot be reached is not a server error: wherever it surfaces (a view,
the session or authentication middleware), the API answers 503 problem+json and pages
a readable 503, both with ``Retry-After``; the next request after the database returns
reconnects by itself (``CONN_HEALTH_CHECKS``).
"""

import sys
from datetime import timedelta

from django.http import JsonResponse
from django.shortcuts import render
from django.views.decorators.csrf import csrf_exempt

from evalsite.errors import database_unavailable, domain_error_response, problem_response
from evalsite.selectors import workers_seen
from evalsite.vendor import vendor_name

WORKER_FRESH_FOR = timedelta(minutes=5)


def health(request):
    """Liveness for load balancers: the database answers (else 503); workers seen recently are listed."""
    try:
        recent = workers_seen(within=WORKER_FRESH_FOR)
    except Exception as exc:
        outage = database_unavailable(exc)
        if outage is None:
            raise
        response = JsonResponse({"status": "unavailable", "database": vendor_name(), "workers": []}, status=503)
        response["Retry-After"] = outage.headers["Retry-After"]
        return response
    return JsonResponse({"status": "ok", "database": vendor_name(), "workers": recent})


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
    # Django calls this handler while it handles the exception, so it is still current.
    outage = database_unavailable(sys.exc_info()[1])
    if outage is not None:
        return _unavailable(request, outage)
    if _is_api(request):
        return problem_response(500, "Internal server error", "The server failed; the error was logged.")
    return render(request, "500.html", status=500)


class DatabaseOutageMiddleware:
    """A view that lost the database answers 503 (``_unavailable``), DEBUG or not.

    ``server_error`` covers the same for failures outside views, but Django calls it
    only when DEBUG is off; this hook answers first for everything a view raises.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        outage = database_unavailable(exception)
        return None if outage is None else _unavailable(request, outage)


def _unavailable(request, outage):
    if _is_api(request):
        return domain_error_response(outage)
    # The page names nothing that needs the database (no user, no project).
    response = render(request, "503.html", {"retry_after": outage.extra["retry_after"]}, status=503)
    response["Retry-After"] = outage.headers["Retry-After"]
    return response
