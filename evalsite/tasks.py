"""Worker-level tasks."""

from celery import shared_task

from evalsite.workers import heartbeat_record


@shared_task(name="evalsite.heartbeat")
def heartbeat():
    """Record that a worker is alive and can reach the database; returns its hostname."""
    return heartbeat_record(hostname=heartbeat.request.hostname or "unknown")
