"""Writes of projects, API keys and memberships.

A project's slug is its name in every page URL (``/p/<slug>/``), so ``project_create``
holds the one rule for it (``slug_problem``), whatever creates the project: the
``create_project`` command, an archive import, the demo.
"""

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone
from django.utils.text import slugify

from evalsite.errors import Conflict, Invalid
from evalsite.keys import key_generate
from evalsite.models import ApiKey, Membership, Project
from evalsite.scopes import DEFAULT_SCOPES, scopes_clean

SLUG_MAX_LENGTH = 100


def slug_problem(slug):
    """Why ``slug`` cannot name a project, or ``None``: lowercase ASCII letters, digits, ``-`` and ``_``."""
    if not isinstance(slug, str) or not slug or slugify(slug) != slug:
        return f"must be lowercase letters, digits, hyphens or underscores; got {slug!r}"
    if len(slug) > SLUG_MAX_LENGTH:
        return f"must be at most {SLUG_MAX_LENGTH} characters"
    return None


def project_create(*, slug, name="", quota_per_minute=0):
    """A new project; ``Invalid`` naming ``slug`` if it breaks ``slug_problem``, ``Conflict`` if it is taken."""
    problem = slug_problem(slug)
    if problem is not None:
        raise Invalid(f"The slug {problem}.", errors=[{"field": "slug", "message": problem}])
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


def superuser_set(*, username, email, password):
    """The site's superuser ``username`` (made if missing), with ``password``: for the local demo."""
    User = get_user_model()  # noqa: N806
    user = User.objects.filter(username=username).first() or User(username=username, email=email)
    user.is_staff = user.is_superuser = True
    user.set_password(password)
    user.save()
    return user
