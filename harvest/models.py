"""Failure groups of production runs (``harvest.grouping``), their runs, and how far the grouping has read."""

from django.db import models

from evalsite.models import Project


class FailureGroup(models.Model):
    """Production runs that failed alike: one signature, similar inputs.

    ``centroid`` is the group's TF-IDF centroid (``{term: weight}``, the top terms) over
    its signature's vocabulary (``SignatureVocabulary``); a new failing run joins the
    nearest group of its signature. ``representatives`` are three trace pks nearest the
    centroid; ``reasons`` the most frequent failing checks' reasons at the last build.
    """

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    signature = models.CharField(max_length=500)
    # The failed checks as ",a,b," so that a filter on one scorer is one LIKE.
    checks_text = models.CharField(max_length=1000, default=",")
    checks = models.JSONField(default=list)
    tools = models.JSONField(default=list)
    error_type = models.CharField(max_length=100, blank=True, default="")
    label = models.CharField(max_length=200, blank=True, default="")
    centroid = models.JSONField(default=dict)
    representatives = models.JSONField(default=list)
    reasons = models.JSONField(default=list)
    size = models.PositiveIntegerField(default=0)  # every run of the group, whatever the window
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [models.Index(fields=["project", "signature"], name="failuregroup_signature")]

    def __str__(self):
        return f"{self.signature} ({self.label})"


class FailureMember(models.Model):
    """One failing run in its group; a run is in one group at most (unique), so a tick seen twice adds nothing."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+", db_index=False)
    group = models.ForeignKey(FailureGroup, on_delete=models.CASCADE, related_name="members", db_index=False)
    trace = models.OneToOneField("datasets.Trace", on_delete=models.CASCADE, related_name="+")
    # Copied from the run: a window's sizes are counted on this table alone.
    started_at = models.DateTimeField()
    similarity = models.FloatField(default=1.0)

    class Meta:
        indexes = [
            # A group's runs in a window, and the windowed size of every group.
            models.Index(fields=["group", "started_at"], name="failuremember_group_started"),
            models.Index(fields=["project", "started_at"], name="failuremember_project_started"),
        ]


class SignatureVocabulary(models.Model):
    """The terms (and their idf) a signature's groups were built with: new runs are read with them."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+", db_index=False)
    signature = models.CharField(max_length=500)
    idf = models.JSONField(default=dict)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "signature"], name="signaturevocabulary_unique"),
        ]


class HarvestState(models.Model):
    """How far a project's grouping has read: the highest score, abstention and run ids looked at.

    Each tick reads above these marks (less a margin, for transactions that committed
    late) and moves them in the same transaction as the runs it placed, under this row's
    lock: a tick killed midway leaves the marks where they were, and the next one does
    its work again.
    """

    project = models.OneToOneField(Project, on_delete=models.CASCADE, related_name="+")
    score_pk = models.BigIntegerField(default=0)
    abstention_pk = models.BigIntegerField(default=0)
    trace_pk = models.BigIntegerField(default=0)
    built_at = models.DateTimeField(null=True, blank=True)
    runs_at_build = models.PositiveIntegerField(default=0)
    # Runs placed in new groups of their own since the build: many means the groups have drifted.
    strays_since_build = models.PositiveIntegerField(default=0)
    rebuild_requested = models.BooleanField(default=False)
    updated_at = models.DateTimeField(auto_now=True)
