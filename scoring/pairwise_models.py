"""Pairwise judgements: a reviewer's verdict on two experiments' answers to one golden case.

Its own model rather than a kind of ``LabelConfig``: a label is a score on one run, a
pairwise judgement is about two runs (one per experiment) and has no meaning for either
alone. Imported by ``scoring.models``, so Django and the migrations see it there.
"""

from django.conf import settings
from django.db import models
from django.db.models import F, Q

from evalsite.models import Project


class PairwiseVerdict(models.TextChoices):
    BETTER = "better"  # experiment_a's answer is the better one
    WORSE = "worse"
    TIE = "tie"


class PairwiseJudgement(models.Model):
    """One reviewer's judgement of ``experiment_a``'s answer to ``case`` against ``experiment_b``'s.

    The pair is stored in one order (``experiment_a`` has the lower id; the service flips
    the verdict of a pair asked the other way round), so the unique constraint holds one
    judgement per author (reviewer or key), case and pair whichever way the pair was shown. ``trace_a`` and
    ``trace_b`` are the runs that were shown (kept as null when retention drops a run).
    """

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    case = models.ForeignKey("datasets.GoldenCase", on_delete=models.CASCADE, related_name="+")
    experiment_a = models.ForeignKey("datasets.Experiment", on_delete=models.CASCADE, related_name="+")
    experiment_b = models.ForeignKey("datasets.Experiment", on_delete=models.CASCADE, related_name="+")
    trace_a = models.ForeignKey("datasets.Trace", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    trace_b = models.ForeignKey("datasets.Trace", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    # Who judged: a reviewer's user name, or "key:<name>" for an app's API key (``reviewer`` is then null).
    author = models.CharField(max_length=200)
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    verdict = models.CharField(max_length=8, choices=PairwiseVerdict.choices)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            # A second judgement by the same reviewer replaces the first; a retried POST cannot add one.
            models.UniqueConstraint(
                fields=["case", "experiment_a", "experiment_b", "author"], name="pairwise_unique_reviewer_case_pair"
            ),
            models.CheckConstraint(condition=Q(experiment_a__lt=F("experiment_b")), name="pairwise_pair_in_order"),
            models.CheckConstraint(condition=Q(verdict__in=PairwiseVerdict.values), name="pairwise_verdict_known"),
        ]
        # The summary of one pair counts its judgements.
        indexes = [models.Index(fields=["experiment_a", "experiment_b"], name="pairwise_pair")]

    def __str__(self):
        return f"{self.case_id}: {self.experiment_a_id} {self.verdict} {self.experiment_b_id}"
