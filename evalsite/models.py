"""Projects, their API keys and members, the quota ledger and worker heartbeats."""

from django.conf import settings
from django.db import models


class Project(models.Model):
    slug = models.SlugField(max_length=100, unique=True)
    name = models.CharField(max_length=200)
    # Records (runs, scores) the project may write per minute; 0 means no ceiling.
    quota_per_minute = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["slug"]

    def __str__(self):
        return self.slug


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


class Heartbeat(models.Model):
    """The last time each Celery worker answered a heartbeat task."""

    hostname = models.CharField(max_length=255, unique=True)
    seen_at = models.DateTimeField()

    def __str__(self):
        return self.hostname
