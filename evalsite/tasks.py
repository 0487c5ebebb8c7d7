"""Worker-level tasks, and the heartbeat every worker sends by itself."""

import socket

from celery import shared_task
from celery.signals import worker_ready

from evalsite.workers import heartbeat_record, heartbeats_start


@shared_task(name="evalsite.heartbeat", routine=True)
def heartbeat():
    """Record that a worker is alive and can reach the database; returns its hostname."""
    return heartbeat_record(hostname=heartbeat.request.hostname or "unknown")


@worker_ready.connect
def heartbeat_start(sender, **kwargs):
    """A worker that is ready beats from a thread of its main process (``/healthz`` lists it)."""
    heartbeats_start(hostname=getattr(sender, "hostname", None) or socket.gethostname())
