"""Reads of the project's own records: memberships, the team page's lists, worker heartbeats.

Every read is scoped by the caller's project or user; a page asks here instead of
querying the models (``tests/test_architecture.py``: no ORM under ``web/``).
"""

from django.db import connection
from django.utils import timezone

from evalsite.models import ApiKey, AuditEntry, Heartbeat, Invitation, Membership, Project


def project_find(slug):
    """The project ``slug``, or ``None`` (for commands run on the server, which see every project)."""
    return Project.objects.filter(slug=slug).first()


def membership_find(*, user, slug):
    """``user``'s membership of the project ``slug`` (its project joined), or ``None``."""
    return Membership.objects.select_related("project").filter(user=user, project__slug=slug).first()


def memberships_of(*, user):
    """``user``'s memberships, their projects joined, by project slug (the project switcher)."""
    return list(Membership.objects.filter(user=user).select_related("project").order_by("project__slug"))


def team_of(*, project, audit_shown):
    """The settings page's lists: keys, members, open invitations and the newest ``audit_shown`` audit entries."""
    return {
        "keys": ApiKey.objects.filter(project=project).select_related("created_by"),
        "members": Membership.objects.filter(project=project).select_related("user").order_by("user__username"),
        "invitations": [i for i in Invitation.objects.filter(project=project, accepted_at__isnull=True) if i.is_open],
        "audit": AuditEntry.objects.filter(project=project)[:audit_shown],
    }


def workers_seen(*, within):
    """The host names of workers whose heartbeat is younger than ``within``, after one ``SELECT 1``.

    The ``SELECT 1`` is the health check's question to the database: a database that
    cannot be reached raises here, whatever the heartbeat table holds.
    """
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return [h.hostname for h in Heartbeat.objects.filter(seen_at__gte=timezone.now() - within)]


def heartbeat_ages(*, now):
    """``[(hostname, seconds since its last heartbeat)]`` of every worker seen (the metrics)."""
    return [(h.hostname, (now - h.seen_at).total_seconds()) for h in Heartbeat.objects.all()]
