"""Monitors of production runs, the alerts their state changes write, and webhook deliveries."""

from django.db import models

from evalsite.models import Project

# How many runs an alert keeps as the ones that drove it (its review queue).
ALERT_RUNS_CAP = 500


class Metric(models.TextChoices):
    PASS_RATE = "pass_rate"
    ERROR_RATE = "error_rate"
    LATENCY_P95 = "latency_p95"
    COST_P95 = "cost_p95"
    FEEDBACK = "feedback"


class Direction(models.TextChoices):
    ABOVE = "above"
    BELOW = "below"


class MonitorState(models.TextChoices):
    OK = "ok"
    FIRING = "firing"
    INSUFFICIENT = "insufficient"


class Monitor(models.Model):
    """One number of the project's runs in a moving window, kept on one side of ``target``.

    ``filter`` narrows the runs: ``name`` (equal) and ``tags`` (all present);
    ``production_only`` keeps runs of no experiment. ``scorer`` is the scorer of a
    ``pass_rate``, ``feedback_name`` the name of a ``feedback`` metric (scorer
    ``feedback:<name>``). The last reading (n, value, interval) is kept for the pages.
    ``state`` changes only by a conditional update from the state read (monitors.evaluation).
    """

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="monitors")
    name = models.CharField(max_length=100)
    metric = models.CharField(max_length=20, choices=Metric.choices)
    scorer = models.CharField(max_length=100, blank=True, default="")
    feedback_name = models.CharField(max_length=100, blank=True, default="")
    filter = models.JSONField(default=dict, blank=True)
    production_only = models.BooleanField(default=True)
    window_minutes = models.PositiveIntegerField(default=60)
    target = models.FloatField()
    direction = models.CharField(max_length=5, choices=Direction.choices)
    min_runs = models.PositiveIntegerField(default=30)
    paused = models.BooleanField(default=False)
    state = models.CharField(max_length=12, choices=MonitorState.choices, default=MonitorState.INSUFFICIENT)
    last_evaluated_at = models.DateTimeField(null=True, blank=True)
    last_n = models.PositiveIntegerField(default=0)
    last_value = models.FloatField(null=True, blank=True)
    last_low = models.FloatField(null=True, blank=True)
    last_high = models.FloatField(null=True, blank=True)
    webhook_urls = models.JSONField(default=list, blank=True)
    # Addresses each alert is e-mailed to (plain text), when the server has EMAIL_HOST.
    email_recipients = models.JSONField(default=list, blank=True)
    # Signs every webhook body (HMAC-SHA256); shown to admins to verify deliveries.
    secret = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["project", "name"], name="monitor_unique_project_name"),
            models.CheckConstraint(condition=models.Q(window_minutes__gte=1), name="monitor_window_positive"),
        ]

    def __str__(self):
        return f"{self.project.slug}: {self.name}"


class Alert(models.Model):
    """A monitor's state change: it fired or resolved, on a window of ``n`` runs.

    ``run_ids`` are the trace pks of the runs that drove it (failing runs, at most
    ``ALERT_RUNS_CAP``), opened as an annotation queue from the alert's page.
    """

    class Kind(models.TextChoices):
        FIRED = "fired"
        RESOLVED = "resolved"

    monitor = models.ForeignKey(Monitor, on_delete=models.CASCADE, related_name="alerts")
    kind = models.CharField(max_length=8, choices=Kind.choices)
    at = models.DateTimeField()
    window_start = models.DateTimeField()
    window_end = models.DateTimeField()
    n = models.PositiveIntegerField()
    value = models.FloatField(null=True, blank=True)
    low = models.FloatField(null=True, blank=True)
    high = models.FloatField(null=True, blank=True)
    run_ids = models.JSONField(default=list, blank=True)
    text = models.TextField()

    class Meta:
        ordering = ["-at", "-id"]
        # The alerts list of a monitor, newest first.
        indexes = [models.Index(fields=["monitor", "-at", "-id"], name="alert_monitor_newest")]


class Channel(models.TextChoices):
    WEBHOOK = "webhook"
    EMAIL = "email"


class Delivery(models.Model):
    """The sending of one alert to one webhook URL or one e-mail address, however many attempts it took.

    Unique per alert and URL (an e-mail's is ``mailto:<address>``): a retried task finds
    the row and sends nothing once ``delivered_at`` is set. A test sent from the
    monitor's page has no alert. ``last_status`` is the HTTP status, or the SMTP reply code.
    """

    monitor = models.ForeignKey(Monitor, on_delete=models.CASCADE, related_name="deliveries")
    alert = models.ForeignKey(Alert, null=True, blank=True, on_delete=models.CASCADE, related_name="deliveries")
    channel = models.CharField(max_length=8, choices=Channel.choices, default=Channel.WEBHOOK)
    url = models.URLField(max_length=2000)
    attempts = models.PositiveIntegerField(default=0)
    last_status = models.PositiveIntegerField(null=True, blank=True)
    last_error = models.TextField(blank=True, default="")
    delivered_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [models.UniqueConstraint(fields=["alert", "url"], name="delivery_unique_alert_url")]
        indexes = [models.Index(fields=["monitor", "-created_at"], name="delivery_monitor_newest")]

    @property
    def address(self):
        """Where it goes, as people read it: the URL, or the bare e-mail address."""
        return self.url.removeprefix("mailto:") if self.channel == Channel.EMAIL else self.url
