"""What a monitor's message says, for webhooks and e-mail alike: links and the human text.

Links are absolute when ``EVALSITE_PUBLIC_URL`` is set (the site's own address),
otherwise paths.
"""

from django.conf import settings
from django.urls import reverse


def page_url(name, **kwargs):
    """The link to the page ``name`` (a URL name) with ``kwargs``."""
    return (settings.EVALSITE_PUBLIC_URL or "") + reverse(name, kwargs=kwargs)


def monitor_url(monitor):
    return page_url("monitor", slug=monitor.project.slug, monitor_id=monitor.pk)


def alert_url(alert):
    return page_url("monitor-alert", slug=alert.monitor.project.slug, alert_id=alert.pk)


def message_text(monitor, alert=None):
    """The one sentence Slack shows and an e-mail opens with: the alert's text and its link,
    or a test message when ``alert`` is None."""
    if alert is None:
        return f"Test message from monitor {monitor.name!r} of {monitor.project.name}."
    return f"{alert.text} {alert_url(alert)}"
