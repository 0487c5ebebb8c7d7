"""Projects, their API keys and members, the quota ledger and worker heartbeats."""

from django.conf import settings
from django.db import models
from django.utils import timezone

from evalsite.scopes import DEFAULT_SCOPES


class Project(models.Model):
    slug = models.SlugField(max_length=100, unique=True)
    name = models.CharField(max_length=200)
    # Records (runs, scores) the project may write per minute; 0 means no ceiling.
    quota_per_minute = models.PositiveIntegerField(default=0)
    # Runs are deleted this many days after they were ingested, except the ones that
    # must stay (lifecycle.retention); None keeps every run forever.
    retention_days = models.PositiveIntegerField(null=True, blank=True)
    # Web page origins (https://app.example.com) that may send end users' feedback from
    # a browser (CORS, evalsite.origins); empty: none, only servers may.
    feedback_origins = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["slug"]

    def __str__(self):
        return self.slug


def default_scopes():
    return list(DEFAULT_SCOPES)


class ApiKey(models.Model):
    """A project's key. Only a prefix (to find the row) and a SHA-256 of the secret are kept.

    The secret is 256 random bits, so a fast hash is safe: nothing can be guessed from
    it, and checking a key on every request costs one indexed lookup and one hash.
    """

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="api_keys")
    name = models.CharField(max_length=200, blank=True)
    prefix = models.CharField(max_length=16, unique=True)
    secret_hash = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    # What the key may do (evalsite.scopes). Keys made before scopes existed were migrated
    # with full_access, so no running CI job lost its access on the upgrade.
    scopes = models.JSONField(default=default_scopes)
    full_access = models.BooleanField(default=False)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "API key"

    def __str__(self):
        return f"{self.project.slug}: {self.name or self.prefix}"

    @property
    def is_active(self):
        return self.revoked_at is None


class Role(models.TextChoices):
    VIEWER = "viewer"
    REVIEWER = "reviewer"
    ADMIN = "admin"


ROLE_RANK = {Role.VIEWER: 0, Role.REVIEWER: 1, Role.ADMIN: 2}


class Membership(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.VIEWER)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "project"], name="membership_unique_user_project")]

    def __str__(self):
        return f"{self.user} in {self.project} as {self.role}"

    def allows(self, role):
        return ROLE_RANK[self.role] >= ROLE_RANK[role]


class QuotaWindow(models.Model):
    """Records written by a project in one calendar minute.

    One row per (project, minute); writers lock it, so the count is exact however many
    processes write at once (see ``evalsite.quota``).
    """

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    window_start = models.DateTimeField()
    used = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "window_start"], name="quota_window_unique_minute"),
        ]


class RateWindow(models.Model):
    """Requests one sender (a key and a client address, hashed) made in one calendar minute.

    In the database, so every web process counts the same requests (``evalsite.rate_limits``).
    """

    bucket = models.CharField(max_length=64)
    window_start = models.DateTimeField()
    used = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["bucket", "window_start"], name="rate_window_unique_minute")]
        # Old minutes are deleted by their start as new ones open.
        indexes = [models.Index(fields=["window_start"], name="rate_window_start")]


class Heartbeat(models.Model):
    """The last time each Celery worker answered a heartbeat task."""

    hostname = models.CharField(max_length=255, unique=True)
    seen_at = models.DateTimeField()

    def __str__(self):
        return self.hostname


class AuditEntry(models.Model):
    """One change to a project's keys, members, invitations or quota: who, when, what.

    Written by the service that made the change, in its transaction, so a change and
    its record are never one without the other.
    """

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="audit_entries")
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    # Kept apart from the foreign key: the log still says who after the user is deleted.
    actor_name = models.CharField(max_length=150, blank=True)
    at = models.DateTimeField(auto_now_add=True)
    action = models.CharField(max_length=40)
    # What changed, in words a person reads on the settings page.
    summary = models.CharField(max_length=500)
    detail = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-at", "-id"]
        # The settings page lists one project's newest entries first.
        indexes = [models.Index(fields=["project", "-at"], name="audit_project_at")]


class Invitation(models.Model):
    """A one-time link that makes its holder a member of a project with a role.

    Only a SHA-256 of the token is kept; the link is shown once to the admin who made
    it, who hands it over (e-mail, chat): no e-mail delivery is needed.
    """

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="invitations")
    email = models.EmailField()
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.VIEWER)
    token_hash = models.CharField(max_length=64, unique=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    accepted_at = models.DateTimeField(null=True, blank=True)
    accepted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    @property
    def is_open(self):
        return self.accepted_at is None and self.revoked_at is None and self.expires_at > timezone.now()
