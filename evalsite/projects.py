"""Writes of projects, API keys and memberships."""

from django.db import transaction
from django.utils import timezone

from evalsite.errors import Conflict
from evalsite.keys import key_generate
from evalsite.models import ApiKey, Membership, Project
from evalsite.scopes import DEFAULT_SCOPES, scopes_clean


def project_create(*, slug, name="", quota_per_minute=0):
    """A new project; ``Conflict`` if the slug is taken."""
    with transaction.atomic():
        if Project.objects.filter(slug=slug).exists():
            raise Conflict(f"A project with slug {slug!r} already exists.")
        return Project.objects.create(slug=slug, name=name or slug, quota_per_minute=quota_per_minute)


def api_key_create(*, project, name="", created_by=None, scopes=DEFAULT_SCOPES):
    """``(ApiKey, full_key)``. The full key exists only in this return value: show it once.

    ``scopes`` defaults to what a CI job needs (``ingest,gate``); ``ValueError`` names an
    unknown scope.
    """
    scopes = scopes_clean(scopes)
    full_key, prefix, secret_hash = key_generate()
    key = ApiKey.objects.create(
        project=project,
        name=name,
        prefix=prefix,
        secret_hash=secret_hash,
        created_by=created_by,
        scopes=list(scopes),
    )
    return key, full_key


def api_key_revoke(*, key):
    """Revoke a key; idempotent (revoking twice keeps the first time)."""
    ApiKey.objects.filter(pk=key.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())
    key.refresh_from_db(fields=["revoked_at"])
    return key


def membership_set(*, user, project, role):
    membership, _ = Membership.objects.update_or_create(user=user, project=project, defaults={"role": role})
    return membership
