"""Online rules (which arriving runs to score, and with what) and the runs each rule saw."""

from django.conf import settings
from django.db import models

from evalsite.models import Project


class OnlineRule(models.Model):
    """Score the runs that arrive and match ``filter``, a deterministic ``sample_rate`` of them.

    ``filter`` holds the runs list's filters: ``name``, ``experiment`` (a name, or
    ``"none"`` for production runs), ``session``, ``user``, ``tags`` (all present),
    ``metadata`` (each key equal). ``scanned_pk`` is how far the rule has looked.
    """

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="online_rules")
    name = models.CharField(max_length=100)
    filter = models.JSONField(default=dict, blank=True)
    sample_rate = models.FloatField(default=1.0)
    scorers = models.JSONField(default=list)
    config = models.JSONField(default=dict, blank=True)
    paused = models.BooleanField(default=False)
    # Why the last batch could not be scored (a scorer no longer configured), or blank.
    last_error = models.TextField(blank=True, default="")
    # The highest run id the rule has looked at; a tick looks again a margin below it,
    # so a run committed late (a long transaction) is still seen once.
    scanned_pk = models.BigIntegerField(default=0)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["project", "name"], name="onlinerule_unique_name"),
            models.CheckConstraint(
                condition=models.Q(sample_rate__gte=0, sample_rate__lte=1), name="onlinerule_rate_0_1"
            ),
        ]

    def __str__(self):
        return f"{self.project.slug}: {self.name}"


class OnlineSample(models.Model):
    """One run a rule matched: whether the sample took it, and the pass that scored it.

    Unique per rule and run, so however many ticks look at a run it is counted and
    scored once.
    """

    rule = models.ForeignKey(OnlineRule, on_delete=models.CASCADE, related_name="samples")
    trace = models.ForeignKey("datasets.Trace", on_delete=models.CASCADE, related_name="+")
    sampled = models.BooleanField()
    scoring_pass = models.ForeignKey(
        "scoring.ScoringPass", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["rule", "trace"], name="onlinesample_unique_run")]
