"""Worker liveness, as seen from the database."""

from django.utils import timezone

from evalsite.models import Heartbeat


def heartbeat_record(*, hostname):
    Heartbeat.objects.update_or_create(hostname=hostname, defaults={"seen_at": timezone.now()})
    return hostname
