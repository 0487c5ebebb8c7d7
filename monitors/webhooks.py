"""Webhooks of a monitor: each alert POSTed, signed, to every URL, delivered once (and
e-mailed to every recipient, ``monitors.emails``, through the same deliveries).

**Body.** JSON: ``text`` (a sentence Slack and Mattermost show as the message),
``event`` (``alert.fired``, ``alert.resolved`` or ``test``), ``monitor`` and ``alert``
(the structured alert, with the trace ids of the runs that drove it).

**Signature.** ``X-Evalsite-Signature: t=<unix seconds>,v1=<hex>`` where ``v1`` is
HMAC-SHA256 with the monitor's secret over ``<t>.<body bytes>`` (docs/monitors.md shows
how to verify it). Each attempt is signed at its own time.

**Once.** A ``Delivery`` row per alert and URL (unique) is made when the alert is
committed; the task ``monitors.deliver`` sends it and is retried with backoff on a
connection error or a 5xx (``DeliveryFailed``), at most ``DELIVERY_TRIES`` times. A
delivery already marked delivered is never sent again, so a retried or doubled task
sends nothing after a success; each attempt is claimed by a conditional update of its
count, so two copies of the task do not send at once. A 4xx is final (the receiver refuses it). The URL is
checked again (``evalsite.outbound``) just before each attempt.
"""

import hashlib
import hmac
import time

import httpx
import orjson
from celery import current_app
from django.db import transaction
from django.utils import timezone

from datasets.models import Trace
from evalsite.errors import DomainError
from evalsite.outbound import outbound_url_check
from monitors.emails import EmailFailed, email_deliveries, email_send
from monitors.messages import alert_url, message_text, monitor_url
from monitors.models import Channel, Delivery

SIGNATURE_HEADER = "X-Evalsite-Signature"
DELIVER_TASK = "monitors.deliver"
TIMEOUT_SECONDS = 10
DELIVERY_TRIES = 6
RUNS_IN_BODY = 50


class DeliveryFailed(Exception):
    """A transient failure (no connection, a 5xx): the task tries again later."""


def signature(secret, timestamp, body):
    """The header value signing ``body`` (bytes) at ``timestamp`` (int seconds)."""
    digest = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    return f"t={timestamp},v1={digest}"


def webhook_body(monitor, alert=None):
    """The JSON body (bytes) telling about ``alert``, or a test message when it is None."""
    body = {
        "event": "test" if alert is None else f"alert.{alert.kind}",
        "monitor": {"id": monitor.pk, "name": monitor.name, "project": monitor.project.slug,
                    "metric": monitor.metric, "target": monitor.target, "direction": monitor.direction,
                    "state": monitor.state, "url": monitor_url(monitor)},
    }  # fmt: skip
    body["text"] = message_text(monitor, alert)
    if alert is None:
        body["alert"] = None
        return orjson.dumps(body)
    runs = Trace.objects.filter(pk__in=alert.run_ids[:RUNS_IN_BODY]).order_by("pk").values_list("trace_id", flat=True)
    url = alert_url(alert)
    body["alert"] = {
        "id": alert.pk, "kind": alert.kind, "at": alert.at.isoformat(), "window_start": alert.window_start.isoformat(),
        "window_end": alert.window_end.isoformat(), "n": alert.n, "value": alert.value, "low": alert.low,
        "high": alert.high, "failing_runs": len(alert.run_ids), "trace_ids": list(runs), "url": url,
    }  # fmt: skip
    return orjson.dumps(body)


def _enqueue(delivery_ids):
    # By name: the task module imports the evaluation, which imports this one.
    for delivery_id in delivery_ids:
        transaction.on_commit(lambda d=delivery_id: current_app.send_task(DELIVER_TASK, args=[d]))


def _deliveries(monitor, alert=None):
    webhooks = [Delivery(monitor=monitor, alert=alert, url=url) for url in monitor.webhook_urls]
    return webhooks + email_deliveries(monitor, alert)


def alert_deliveries_enqueue(*, alert):
    """One delivery per webhook URL and e-mail recipient of the alert's monitor, sent by
    workers after commit (idempotent)."""
    Delivery.objects.bulk_create(_deliveries(alert.monitor, alert), ignore_conflicts=True)
    _enqueue(Delivery.objects.filter(alert=alert, delivered_at__isnull=True).values_list("pk", flat=True))


def monitor_test_message(*, monitor):
    """A test message to every webhook URL and e-mail recipient of ``monitor``; returns the deliveries made."""
    deliveries = Delivery.objects.bulk_create(_deliveries(monitor))
    _enqueue([d.pk for d in deliveries])
    return deliveries


def delivery_send(*, delivery_id):
    """Make one attempt at ``delivery_id``; ``True`` when delivered (now or before).

    Raises ``DeliveryFailed`` on a transient failure (the caller retries); a refusal by
    the address rule, a 4xx or an SMTP 5xx is recorded and final (``False``).
    """
    delivery = Delivery.objects.select_related("monitor__project", "alert").filter(pk=delivery_id).first()
    if delivery is None or delivery.delivered_at is not None:
        return delivery is not None
    # The attempt is claimed by compare-and-set on its count: of two tasks of one delivery
    # running at once (a message delivered twice), one sends and the other stops.
    claimed = Delivery.objects.filter(pk=delivery.pk, delivered_at__isnull=True, attempts=delivery.attempts)
    if not claimed.update(attempts=delivery.attempts + 1):
        return False
    if delivery.channel == Channel.EMAIL:
        try:
            return email_send(delivery)
        except EmailFailed as exc:
            raise DeliveryFailed(str(exc)) from exc
    try:
        outbound_url_check(delivery.url, field="webhook_urls")
    except DomainError as exc:
        Delivery.objects.filter(pk=delivery.pk).update(last_error=exc.detail[:2000])
        return False
    body = webhook_body(delivery.monitor, delivery.alert)
    headers = {"Content-Type": "application/json", "User-Agent": "evalsite-webhook",
               SIGNATURE_HEADER: signature(delivery.monitor.secret, int(time.time()), body),
               "X-Evalsite-Delivery": str(delivery.pk)}  # fmt: skip
    try:
        response = httpx.post(delivery.url, content=body, headers=headers, timeout=TIMEOUT_SECONDS)
    except httpx.HTTPError as exc:
        Delivery.objects.filter(pk=delivery.pk).update(last_status=None, last_error=str(exc)[:2000] or repr(exc))
        raise DeliveryFailed(str(exc)) from exc
    return _record(delivery, response.status_code)


def _record(delivery, status):
    if 200 <= status < 300:
        Delivery.objects.filter(pk=delivery.pk, delivered_at__isnull=True).update(
            last_status=status, last_error="", delivered_at=timezone.now()
        )
        return True
    Delivery.objects.filter(pk=delivery.pk).update(last_status=status, last_error=f"answered {status}")
    if status >= 500 or status == 429:
        raise DeliveryFailed(f"answered {status}")
    return False
