"""Changes to monitors that people make: create and change them, open an alert's runs as a queue.

The API and the pages call these same functions; the fields' rules are ``monitors.monitor_rules``.
"""

import secrets

from django.db import transaction

from evalsite.errors import Invalid
from monitors.models import Monitor
from monitors.monitor_rules import FIELDS, monitor_fields
from scoring.review.queue import queue_for_runs


def alert_queue_open(*, alert, by=None):
    """The annotation queue of exactly the runs that drove ``alert`` (created on first use, idempotent)."""
    name = f"Alert {alert.pk}: {alert.monitor.name}"
    return queue_for_runs(project=alert.monitor.project, name=name, run_ids=alert.run_ids, by=by)


def _current(monitor):
    return {field: getattr(monitor, field) for field in FIELDS}


def monitor_create(*, project, data):
    """A new monitor from ``data`` (``monitors.monitor_rules``), with a new signing secret.

    ``Invalid`` naming each bad field, or ``name`` when the project has a monitor of that
    name; nothing is written then. It is evaluated from the next minute on.
    """
    fields = monitor_fields(data)
    with transaction.atomic():
        if Monitor.objects.filter(project=project, name=fields["name"]).exists():
            raise _name_taken(fields["name"])
        return Monitor.objects.create(project=project, secret=secrets.token_hex(32), **fields)


def monitor_update(*, monitor, data):
    """Change any fields of ``monitor`` (pause or resume with ``paused``); all rules checked
    over the merged fields. A change of what is watched keeps the state: the next
    evaluation decides again."""
    fields = monitor_fields(data, current=_current(monitor))
    with transaction.atomic():
        if Monitor.objects.filter(project=monitor.project, name=fields["name"]).exclude(pk=monitor.pk).exists():
            raise _name_taken(fields["name"])
        Monitor.objects.filter(pk=monitor.pk).update(**fields)
    monitor.refresh_from_db()
    return monitor


def _name_taken(name):
    message = f"is already the name of a monitor in this project ({name!r})"
    return Invalid(f"name {message}.", errors=[{"field": "name", "message": message}])
