"""``GET /metrics``: the Prometheus exposition (``evalsite.metrics``) for a scraper.

Protected by ``EVALSITE_METRICS_TOKEN`` when it is set (``Authorization: Bearer
<token>``; anything else is 401). Unset, the endpoint answers anyone who reaches it:
keep it off the public side of the proxy (docs/deploy.md). The work's state (chunks by
state, worker heartbeats) is read through the selectors of ``scoring`` and ``evalsite``, combined here.
"""

import hmac

from django.conf import settings
from django.http import HttpResponse
from django.utils import timezone
from prometheus_client import CONTENT_TYPE_LATEST

from evalsite.metrics import metrics_text
from evalsite.selectors import heartbeat_ages
from scoring.selectors import chunk_counts


def work_state():
    now = timezone.now()
    return chunk_counts(now=now), heartbeat_ages(now=now)


def metrics(request):
    token = settings.EVALSITE_METRICS_TOKEN
    if token:
        scheme, _, given = request.headers.get("Authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(), token.encode()):
            response = HttpResponse("A metrics token is required: Authorization: Bearer <token>.\n", status=401)
            response["WWW-Authenticate"] = 'Bearer realm="metrics"'
            return response
    return HttpResponse(metrics_text(work_state), content_type=CONTENT_TYPE_LATEST)
