from django.conf import settings
from django.db import models


class ExportStatus(models.TextChoices):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    EXPIRED = "expired"  # done, and its file removed after the retention period


class ProjectExport(models.Model):
    """A project archive written by a worker (``lifecycle.exports``): who asked, how far, where the file is.

    ``runs_written`` of ``runs_total`` is the progress; ``path`` is the file under
    ``EVALSITE_EXPORT_DIR`` once done. A worker holds the job by ``lease_until``
    (``evalsite.background.lease``); a job whose worker died is sent again by the sweep,
    ``attempts`` times at most (``EVALSITE_EXPORT_MAX_ATTEMPTS``), then failed.
    """

    project = models.ForeignKey("evalsite.Project", on_delete=models.CASCADE, related_name="exports")
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    requested_by_key = models.ForeignKey("evalsite.ApiKey", null=True, blank=True, on_delete=models.SET_NULL)
    status = models.CharField(max_length=10, choices=ExportStatus.choices, default=ExportStatus.QUEUED)
    runs_total = models.PositiveIntegerField(default=0)
    runs_written = models.PositiveIntegerField(default=0)
    scores_written = models.PositiveBigIntegerField(default=0)
    path = models.CharField(max_length=500, blank=True, default="")
    size_bytes = models.PositiveBigIntegerField(null=True, blank=True)
    error = models.TextField(blank=True, default="")
    attempts = models.PositiveSmallIntegerField(default=0)
    lease_until = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["status", "lease_until"]), models.Index(fields=["project", "-created_at"])]

    def __str__(self):
        return f"export {self.pk} of {self.project_id} ({self.status})"
