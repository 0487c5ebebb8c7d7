"""E-mail of a monitor's alerts: one plain-text message per alert and recipient, sent once.

E-mail is on when ``EMAIL_HOST`` is set (Django's ``EMAIL_*`` settings, read from the
environment; docs/monitors.md). Each recipient of an alert gets a ``Delivery`` of
channel ``email`` (its ``url`` is ``mailto:<address>``), sent by the same task as a
webhook (``monitors.deliver``), with the same claim of each attempt and the same
"never again once delivered". An SMTP conversation that fails for a transient reason
(no connection, a timeout, a 4xx reply such as 451) raises ``DeliveryFailed`` and is
retried with backoff; a 5xx reply (the server refuses the message or the address) is
final. The message carries ``Message-ID: <delivery-<id>.<monitor id>@evalsite>`` so a
mail system can drop the copy of an attempt the worker sent twice (it died between the
server's 250 and its record).
"""

import smtplib

from django.conf import settings
from django.core.mail import EmailMessage, get_connection
from django.utils import timezone

from monitors.messages import alert_url, message_text, monitor_url
from monitors.models import Channel, Delivery

SUBJECT_PREFIX = "[evalsite] "


class EmailFailed(Exception):
    """A transient SMTP failure: the task tries again later."""


def email_enabled():
    """Whether this server sends e-mail (``EMAIL_HOST`` set)."""
    return bool(settings.EMAIL_HOST)


def _number(value):
    return "unbounded" if value is None else f"{value:.4g}"


def email_content(monitor, alert=None):
    """``(subject, body)`` of the plain-text e-mail about ``alert`` (a test when None)."""
    if alert is None:
        subject = f"{SUBJECT_PREFIX}Test message from monitor {monitor.name!r}"
        return subject, f"{message_text(monitor)}\n\nThe monitor: {monitor_url(monitor)}\n"
    subject = f"{SUBJECT_PREFIX}Monitor {monitor.name!r} {alert.kind}"
    lines = [
        message_text(monitor, alert),
        "",
        f"Window:       {alert.window_start:%Y-%m-%d %H:%M:%S} to {alert.window_end:%Y-%m-%d %H:%M:%S} UTC",
        f"Runs (n):     {alert.n}",
        f"Value:        {_number(alert.value)} ({monitor.metric}; it must stay {monitor.direction} {monitor.target:g})",
        f"95% interval: {_number(alert.low)} to {_number(alert.high)}",
    ]
    if alert.kind == "fired":
        lines.append(f"Failing runs: {len(alert.run_ids)}")
    lines += ["", f"The runs: {alert_url(alert)}", f"The monitor: {monitor_url(monitor)}", ""]
    return subject, "\n".join(lines)


def email_deliveries(monitor, alert=None):
    """Unsaved deliveries of ``alert`` (or a test) to each recipient; none while e-mail is off."""
    if not email_enabled():
        return []
    return [
        Delivery(monitor=monitor, alert=alert, channel=Channel.EMAIL, url=f"mailto:{address}")
        for address in monitor.email_recipients
    ]


def email_send(delivery):
    """One SMTP attempt at ``delivery`` (already claimed); ``True`` when the server took it.

    Raises ``EmailFailed`` on a transient failure; a 5xx reply is recorded and final (``False``).
    """
    subject, body = email_content(delivery.monitor, delivery.alert)
    message = EmailMessage(
        subject, body, settings.DEFAULT_FROM_EMAIL, [delivery.address],
        headers={"Message-ID": f"<delivery-{delivery.pk}.{delivery.monitor_id}@evalsite>",
                 "X-Evalsite-Delivery": str(delivery.pk)},
        connection=get_connection(fail_silently=False),
    )  # fmt: skip
    try:
        message.send()
    except smtplib.SMTPRecipientsRefused as exc:
        code, reply = next(iter(exc.recipients.values()))
        return _failed(delivery, code, reply)
    except smtplib.SMTPResponseException as exc:
        return _failed(delivery, exc.smtp_code, exc.smtp_error)
    except (smtplib.SMTPException, OSError) as exc:
        _record(delivery, status=None, error=str(exc) or repr(exc))
        raise EmailFailed(str(exc) or repr(exc)) from exc
    Delivery.objects.filter(pk=delivery.pk, delivered_at__isnull=True).update(
        last_status=250, last_error="", delivered_at=timezone.now()
    )
    return True


def _failed(delivery, code, reply):
    reply = reply.decode(errors="replace") if isinstance(reply, bytes) else str(reply)
    _record(delivery, status=code, error=f"SMTP {code}: {reply}")
    if code < 500:
        raise EmailFailed(f"SMTP {code}: {reply}")
    return False


def _record(delivery, *, status, error):
    Delivery.objects.filter(pk=delivery.pk).update(last_status=status, last_error=error[:2000])
