"""Scores, abstentions and the scoring passes that write them."""

from django.conf import settings
from django.db import models

from evalsite.models import Project


class ScoreSource(models.TextChoices):
    BUILTIN = "builtin"
    JUDGE = "judge"
    HUMAN = "human"


class Score(models.Model):
    """One scorer's result on one run.

    Unique on (trace, scorer, scorer_version, config_hash): re-running a pass inserts
    only what is missing. ``experiment`` and ``case`` are copied from the run so that
    comparisons and the gate aggregate scores without joining runs.
    """

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    trace = models.ForeignKey("datasets.Trace", on_delete=models.CASCADE, related_name="scores")
    scorer = models.CharField(max_length=100)
    # For a judge: the model. Scores of two versions of a scorer are not comparable.
    scorer_version = models.CharField(max_length=200, default="1")
    # SHA-256 of the canonical JSON of the config the scorer ran with.
    config_hash = models.CharField(max_length=64)
    config = models.JSONField(default=dict, blank=True)
    value = models.FloatField()
    passed = models.BooleanField()
    reason = models.TextField(blank=True, default="")
    detail = models.JSONField(default=dict, blank=True)
    source = models.CharField(max_length=10, choices=ScoreSource.choices, default=ScoreSource.BUILTIN)
    experiment = models.ForeignKey(
        "experiments.Experiment", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    case = models.ForeignKey("datasets.GoldenCase", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    scoring_pass = models.ForeignKey("ScoringPass", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    # Set when the run changed after scoring (a late span arrived); a re-score replaces it.
    stale = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["trace", "scorer", "scorer_version", "config_hash"], name="score_unique_run_scorer_config"
            ),
            models.CheckConstraint(condition=models.Q(value__gte=0, value__lte=1), name="score_value_0_1"),
        ]
        indexes = [
            # Comparisons aggregate one experiment's scores per scorer.
            models.Index(fields=["experiment", "scorer"], name="score_experiment_scorer"),
        ]


class Abstention(models.Model):
    """A scorer that could not answer for a run, and why. Never a zero, never dropped."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    trace = models.ForeignKey("datasets.Trace", on_delete=models.CASCADE, related_name="abstentions")
    scorer = models.CharField(max_length=100)
    scorer_version = models.CharField(max_length=200, default="1")
    config_hash = models.CharField(max_length=64, blank=True, default="")
    reason = models.CharField(max_length=50)
    detail = models.JSONField(default=dict, blank=True)
    experiment = models.ForeignKey(
        "experiments.Experiment", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    case = models.ForeignKey("datasets.GoldenCase", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    scoring_pass = models.ForeignKey("ScoringPass", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    reviewed_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    reviewed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["project", "-created_at"], name="abstention_project_newest")]


class PassStatus(models.TextChoices):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


class ScoringPass(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="scoring_passes")
    scorers = models.JSONField(default=list)
    config = models.JSONField(default=dict, blank=True)
    # {trace_ids | from | limit | experiment}, as requested.
    selection = models.JSONField(default=dict, blank=True)
    dry_run = models.BooleanField(default=False)
    status = models.CharField(max_length=10, choices=PassStatus.choices, default=PassStatus.QUEUED)
    total = models.PositiveIntegerField(default=0)
    done = models.PositiveIntegerField(default=0)
    written = models.PositiveIntegerField(default=0)
    skipped = models.PositiveIntegerField(default=0)
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    requested_by_key = models.ForeignKey(
        "evalsite.ApiKey", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True, default="")

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name_plural = "scoring passes"
