"""Gate policies (per dataset, with the history of their floor) and gate runs (every verdict)."""

from django.conf import settings
from django.db import models

from datasets.models import Experiment
from evalsite.models import Project


class InputMatch(models.TextChoices):
    WARN = "warn"
    REQUIRE = "require"
    OFF = "off"


class GatePolicy(models.Model):
    """How the gate decides for one dataset. The floor only moves up, except by an admin with a reason."""

    dataset = models.OneToOneField("datasets.Dataset", on_delete=models.CASCADE, related_name="gate_policy")
    # Lowest pass rate (passed / measured cases) that passes; 1.0 means every case must pass.
    min_pass_rate = models.FloatField(default=1.0)
    # When a PASS recorded as the new baseline beats the floor, the floor rises to it.
    ratchet = models.BooleanField(default=True)
    # FAIL when a decidable comparison with the baseline regressed on a gating scorer.
    fail_on_regression = models.BooleanField(default=True)
    # How far a scorer's mean may drop before a decidable comparison counts as a regression.
    tolerance = models.FloatField(default=0.0)
    # Scorers every case is gated on, beyond those its expectations imply.
    scorers = models.JSONField(default=list, blank=True)
    # Cases that may go unmeasured (a gating check abstained) before the gate fails.
    max_abstained = models.PositiveIntegerField(default=0)
    # Trials each case needs; fewer recorded (or measured) leaves the case unmeasured.
    trials = models.PositiveIntegerField(default=1)
    # Share of a case's measured trials that must pass; 1.0 = every one (pass^k).
    trial_pass_ratio = models.FloatField(default=1.0)
    # Flaky cases (some trials passed, some failed) tolerated; None = no limit.
    max_flaky = models.PositiveIntegerField(null=True, blank=True)
    # A judge criterion gates only once it agrees with reviewers: Cohen's kappa of at
    # least this on at least judge_min_labels labelled runs (None: always gates, which
    # lets a judge nobody compared with people decide; loosening it takes an admin).
    judge_min_kappa = models.FloatField(null=True, blank=True, default=0.6)
    judge_min_labels = models.PositiveIntegerField(default=30)
    # A run whose input does not contain its case's input (checks.input_match): warn lists it
    # in the verdict, require also leaves that trial unmeasured, off does not look.
    input_match = models.CharField(max_length=10, choices=InputMatch.choices, default=InputMatch.WARN)
    baseline = models.ForeignKey(Experiment, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    # The number of the latest PolicyRevision (0: never changed); every verdict carries it.
    revision = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "gate policies"
        constraints = [
            models.CheckConstraint(
                condition=models.Q(min_pass_rate__gte=0, min_pass_rate__lte=1), name="policy_floor_0_1"
            ),
            models.CheckConstraint(condition=models.Q(tolerance__gte=0, tolerance__lte=1), name="policy_tolerance_0_1"),
            models.CheckConstraint(condition=models.Q(trials__gte=1, trials__lte=100), name="policy_trials_1_100"),
            models.CheckConstraint(
                condition=models.Q(trial_pass_ratio__gt=0, trial_pass_ratio__lte=1), name="policy_trial_ratio_0_1"
            ),
            models.CheckConstraint(
                condition=models.Q(input_match__in=["warn", "require", "off"]), name="policy_input_match_known"
            ),
        ]

    def __str__(self):
        return f"gate policy of {self.dataset}"


class FloorChange(models.Model):
    """One move of a policy's floor: by the ratchet, raised through the API, or lowered by an admin."""

    class Source(models.TextChoices):
        RATCHET = "ratchet"
        INIT = "init"
        API = "api"
        ADMIN = "admin"

    policy = models.ForeignKey(GatePolicy, on_delete=models.CASCADE, related_name="floor_changes")
    old_floor = models.FloatField()
    new_floor = models.FloatField()
    source = models.CharField(max_length=10, choices=Source.choices)
    reason = models.TextField(blank=True, default="")
    changed_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    changed_by_key = models.ForeignKey(
        "evalsite.ApiKey", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    gate_run = models.ForeignKey("GateRun", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]


class PolicyRevision(models.Model):
    """One change to a gate policy: who, when, why, and each field before and after.

    ``changes`` is ``[{field, old, new, loosens}]``; ``loosens`` is true when the change
    can turn a FAIL into a PASS (``gating.revisions``). Written in the transaction
    that changes the policy, so a change never exists without its revision.
    """

    class Source(models.TextChoices):
        API = "api"
        PAGE = "page"
        ADMIN = "admin"
        GATE = "gate"

    policy = models.ForeignKey(GatePolicy, on_delete=models.CASCADE, related_name="revisions")
    number = models.PositiveIntegerField()
    source = models.CharField(max_length=10, choices=Source.choices)
    changed_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    changed_by_key = models.ForeignKey(
        "evalsite.ApiKey", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Kept apart from the foreign keys: the history still says who after a key or user is gone.
    author = models.CharField(max_length=250)
    reason = models.TextField(blank=True, default="")
    changes = models.JSONField(default=list)
    loosens = models.BooleanField(default=False)
    gate_run = models.ForeignKey("GateRun", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-number"]
        constraints = [models.UniqueConstraint(fields=["policy", "number"], name="policyrevision_unique_number")]

    def __str__(self):
        return f"revision {self.number} of {self.policy}"


class GateRun(models.Model):
    """One verdict of the gate, with everything it was based on."""

    class Status(models.TextChoices):
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"

    class Verdict(models.TextChoices):
        PASS = "PASS"
        FAIL = "FAIL"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="gate_runs")
    dataset = models.ForeignKey("datasets.Dataset", on_delete=models.CASCADE, related_name="gate_runs")
    experiment = models.ForeignKey(Experiment, on_delete=models.CASCADE, related_name="gate_runs")
    baseline = models.ForeignKey(Experiment, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    set_baseline = models.BooleanField(default=False)
    # With set_baseline on a dataset with no baseline yet: record it pass or fail, floor at its pass rate.
    init_floor = models.BooleanField(default=False)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.RUNNING)
    verdict = models.CharField(max_length=4, choices=Verdict.choices, null=True, blank=True)
    pass_rate = models.FloatField(null=True, blank=True)
    floor = models.FloatField(null=True, blank=True)
    passed_cases = models.PositiveIntegerField(default=0)
    total_cases = models.PositiveIntegerField(default=0)
    unmeasured_cases = models.PositiveIntegerField(default=0)
    baseline_pass_rate = models.FloatField(null=True, blank=True)
    # The answer without its per-case results (those are GateCase rows): figures,
    # comparison, blockers. Small whatever the number of cases.
    result = models.JSONField(default=dict, blank=True)
    # {case id: version} of the cases this verdict ran against.
    case_versions = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True, default="")
    requested_by_key = models.ForeignKey(
        "evalsite.ApiKey", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # A worker evaluating a large gate holds it by a lease it renews; one that stopped
    # renewing (killed) loses it, and the sweeper hands the gate to another worker.
    claimed_by = models.CharField(max_length=255, blank=True, default="")
    # The Celery queue its task goes to (the sweeper sends it there again).
    queue = models.CharField(max_length=200, blank=True, default="")
    lease_until = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["project", "-created_at"], name="gaterun_project_newest"),
            # The sweeper reads the gate runs still running.
            models.Index(fields=["status", "lease_until"], name="gaterun_status_lease"),
        ]

    def __str__(self):
        return f"gate {self.pk} {self.experiment} {self.verdict or self.status}"


class GateCase(models.Model):
    """One case's result in one gate run: kept in rows, served paged, failures first.

    ``result`` is the case's answer (seed fields, checks, trials, reasons); the columns
    beside it are what lists filter and sort on, and what a case's history reads.
    """

    gate_run = models.ForeignKey(GateRun, on_delete=models.CASCADE, related_name="cases")
    # The case's place in the report (the dataset's id order).
    position = models.PositiveIntegerField()
    case = models.ForeignKey(
        "datasets.GoldenCase", null=True, blank=True, on_delete=models.SET_NULL, related_name="gate_results"
    )
    name = models.CharField(max_length=200)
    passed = models.BooleanField()
    measured = models.BooleanField()
    flaky = models.BooleanField(default=False)
    quarantined = models.BooleanField(default=False)
    result = models.JSONField(default=dict)

    class Meta:
        ordering = ["gate_run", "position"]
        constraints = [models.UniqueConstraint(fields=["gate_run", "position"], name="gatecase_unique_position")]
        indexes = [
            # A gate run's cases, failures first.
            models.Index(fields=["gate_run", "passed", "position"], name="gatecase_failures_first"),
            # The pages of ``gating.case_pages``: gating or quarantined cases, failures first.
            models.Index(fields=["gate_run", "quarantined", "passed", "measured", "position"], name="gatecase_pages"),
            # A case's history across gate runs.
            models.Index(fields=["case", "-gate_run"], name="gatecase_case_history"),
        ]

    def __str__(self):
        return f"{self.name} in gate {self.gate_run_id}"
