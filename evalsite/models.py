"""Projects, their API keys, members and judge configuration, the quota ledger and worker heartbeats."""

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


class JudgeConfig(models.Model):
    """A project's LLM judge: where to call it, with which model, and the criteria it asks.

    Off until configured: no row, or a blank endpoint or model, means no judge.
    ``api_key`` is stored as given (the provider needs it back in clear), so it is as
    safe as the database; every surface treats it as write-only: it is never returned,
    rendered, logged or put in an error message. Validation lives in
    ``scoring.judge.services.judge_configure``; the checks below keep the ranges honest
    whatever writes the row.
    """

    project = models.OneToOneField(Project, on_delete=models.CASCADE, related_name="judge_config")
    # Base URL of an OpenAI-compatible server; calls go to {endpoint}/chat/completions.
    endpoint = models.CharField(max_length=500, blank=True, default="")
    model = models.CharField(max_length=200, blank=True, default="")
    api_key = models.CharField(max_length=1000, blank=True, default="")
    # One call, from connect to the last byte of the reply.
    timeout_seconds = models.PositiveSmallIntegerField(default=30)
    # {criterion_id: question}; the ids cannot collide with a built-in scorer's.
    criteria = models.JSONField(default=dict, blank=True)
    # Judge calls a worker makes at once for this project.
    max_concurrency = models.PositiveSmallIntegerField(default=4)
    updated_at = models.DateTimeField(auto_now=True)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        verbose_name = "judge configuration"
        constraints = [
            models.CheckConstraint(
                condition=models.Q(timeout_seconds__gte=1, timeout_seconds__lte=300), name="judge_timeout_1_300"
            ),
            models.CheckConstraint(
                condition=models.Q(max_concurrency__gte=1, max_concurrency__lte=32), name="judge_concurrency_1_32"
            ),
        ]

    def __str__(self):
        # Never the key.
        return f"judge of {self.project.slug}"

    def __repr__(self):
        return f"<JudgeConfig project={self.project_id} model={self.model!r}>"

    @property
    def is_configured(self):
        return bool(self.endpoint.strip() and self.model.strip())

    @property
    def has_api_key(self):
        return bool(self.api_key)


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
