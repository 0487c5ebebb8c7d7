"""Scores, abstentions and skips, the scoring passes (split in chunks) that write them, and the judge's configuration."""

from django.conf import settings
from django.db import models

from evalsite.models import Project


class ScoreSource(models.TextChoices):
    BUILTIN = "builtin"
    JUDGE = "judge"
    HUMAN = "human"
    FEEDBACK = "feedback"  # end users' feedback on production runs (scoring.feedback)


class Score(models.Model):
    """One scorer's result on one run.

    Unique on (trace, scorer, scorer_version, config_hash): re-running a pass inserts
    only what is missing. ``experiment`` and ``case`` are copied from the run so that
    comparisons and the gate aggregate scores without joining runs.

    Scores are the largest table, written in bulk by one writer (``scoring.pipeline.writer``)
    holding a lock on each run it writes for. The columns copied from the run or the pass
    carry no database constraint and no index: each check costs about as much as the
    insert, and nothing reads scores by them alone (Django still applies ``on_delete``).
    The run's foreign key has no constraint either (its locking read was half of a pass's
    writing time), yet a score never outlives its run: a deletion of the run waits for its
    scores to commit, then a PostgreSQL trigger (``scoring_run_deleted``) deletes the scores
    of every deleted run. SQLite lets one writer in at a time: the cascade sees every score.
    """

    project = models.ForeignKey(
        Project, on_delete=models.CASCADE, related_name="+", db_constraint=False, db_index=False
    )
    trace = models.ForeignKey(
        "datasets.Trace", on_delete=models.CASCADE, related_name="scores", db_index=False, db_constraint=False
    )  # indexed by the unique constraint below, which starts with it
    # Room for a prefixed name of 100 characters: ``label:<name>``, ``feedback:<name>``.
    scorer = models.CharField(max_length=120)
    # For a judge: the model. Scores of two versions of a scorer are not comparable.
    scorer_version = models.CharField(max_length=200, default="1")
    # SHA-256 of the canonical JSON of the config the scorer ran with; the config itself
    # is stored once per project and hash (``ScoreConfig``), not in every score.
    config_hash = models.CharField(max_length=64)
    value = models.FloatField()
    passed = models.BooleanField()
    reason = models.TextField(blank=True, default="")
    detail = models.JSONField(default=dict, blank=True)
    source = models.CharField(max_length=10, choices=ScoreSource.choices, default=ScoreSource.BUILTIN)
    # Indexed by score_experiment_scorer below.
    experiment = models.ForeignKey(
        "datasets.Experiment",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        db_constraint=False,
        db_index=False,
    )
    case = models.ForeignKey(
        "datasets.GoldenCase",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        db_constraint=False,
        db_index=False,
    )
    scoring_pass = models.ForeignKey(
        "ScoringPass",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        db_constraint=False,
        db_index=False,
    )
    # The run's revision this score was computed on. Older than the run's own revision
    # means the run changed since (a late span arrived): the score is stale, reads
    # leave it out and a re-score replaces it (``scoring.freshness``).
    run_revision = models.PositiveIntegerField(default=1, db_default=1)
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

    def __str__(self):
        return f"{self.scorer}={self.value:g}"


class ScoreConfig(models.Model):
    """The config a project's scores with ``config_hash`` were computed with, stored once.

    A pass writes tens of thousands of scores with a few hundred distinct configs (a
    case's expected answer, a schema): copied into every score, the config was a third
    of what the database did to write one. Written by ``scoring.score_configs`` with
    the scores that name it, never changed (the hash is of its content), and read back
    by hash where a score is shown with its config.
    """

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+", db_index=False)
    config_hash = models.CharField(max_length=64)
    config = models.JSONField(default=dict, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "config_hash"], name="score_config_unique_project_hash"),
        ]

    def __str__(self):
        return self.config_hash[:12]


class AbstentionKind(models.TextChoices):
    # The scorer looked at the run and could not measure it (no expected answer, the
    # target tool was not called, the judge answered in prose...).
    ABSTAINED = "abstained"
    # The pass did not write a score it computed, or did not run the scorer at all:
    # over the quota, out of time, the run changed while it was scored.
    SKIPPED = "skipped"


class Abstention(models.Model):
    """A scorer that gave no score for a run in a pass, and why. Never a zero, never dropped.

    Unique per (pass, run, scorer, scorer version, config): a chunk processed twice
    records each one once. A later pass over the same run records its own.
    """

    # As on Score, the copied columns carry no database constraint (Django applies on_delete).
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+", db_constraint=False)
    trace = models.ForeignKey("datasets.Trace", on_delete=models.CASCADE, related_name="abstentions")
    scorer = models.CharField(max_length=100)
    scorer_version = models.CharField(max_length=200, default="1")
    config_hash = models.CharField(max_length=64, blank=True, default="")
    kind = models.CharField(max_length=10, choices=AbstentionKind.choices, default=AbstentionKind.ABSTAINED)
    reason = models.CharField(max_length=50)
    detail = models.JSONField(default=dict, blank=True)
    # Comparisons count an experiment's abstentions: indexed.
    experiment = models.ForeignKey(
        "datasets.Experiment",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        db_constraint=False,
    )
    case = models.ForeignKey(
        "datasets.GoldenCase",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        db_constraint=False,
        db_index=False,
    )
    # Indexed by abstention_unique_pass_run_scorer, which starts with it.
    scoring_pass = models.ForeignKey(
        "ScoringPass",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="abstentions",
        db_constraint=False,
        db_index=False,
    )
    created_at = models.DateTimeField(auto_now_add=True)
    reviewed_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    reviewed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["scoring_pass", "trace", "scorer", "scorer_version", "config_hash"],
                name="abstention_unique_pass_run_scorer",
            ),
        ]
        indexes = [models.Index(fields=["project", "-created_at"], name="abstention_project_newest")]

    def __str__(self):
        return f"{self.scorer}: {self.reason}"


class PassStatus(models.TextChoices):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


class ScoringPass(models.Model):
    """Scorers run over a selection of runs, synchronously (``POST /score``) or by workers.

    Counters: ``total`` runs selected, ``done`` runs finished, ``written`` scores
    written, ``skipped`` abstentions and skips recorded, ``existing`` scores that were
    already stored and left alone. A worker pass adds to them only when a chunk is
    marked done (by compare-and-set), so a redelivered chunk never counts twice.
    """

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="scoring_passes")
    scorers = models.JSONField(default=list)
    config = models.JSONField(default=dict, blank=True)
    # {trace_ids | from | limit | experiment}, as requested, plus "until": runs
    # ingested after the pass was requested are not part of it.
    selection = models.JSONField(default=dict, blank=True)
    dry_run = models.BooleanField(default=False)
    # False for POST /score, which runs in the request and is done when it answers.
    background = models.BooleanField(default=True)
    status = models.CharField(max_length=10, choices=PassStatus.choices, default=PassStatus.QUEUED)
    total = models.PositiveIntegerField(default=0)
    done = models.PositiveIntegerField(default=0)
    written = models.PositiveIntegerField(default=0)
    skipped = models.PositiveIntegerField(default=0)
    existing = models.PositiveIntegerField(default=0)
    # How the work is split: runs per chunk, and the Celery queue its tasks go to.
    chunk_runs = models.PositiveIntegerField(default=1000)
    queue = models.CharField(max_length=200, blank=True, default="")
    chunks_total = models.PositiveIntegerField(default=0)
    chunks_done = models.PositiveIntegerField(default=0)
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    requested_by_key = models.ForeignKey(
        "evalsite.ApiKey", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Last time a chunk was claimed or finished: a pass that shows none for a lease
    # period has lost a task message, and the sweeper sends its chunks again.
    progressed_at = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True, default="")

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name_plural = "scoring passes"
        indexes = [
            # The sweeper reads the unfinished passes; the pass list reads a project's newest.
            models.Index(fields=["status", "progressed_at"], name="pass_status_progressed"),
            models.Index(fields=["project", "-created_at"], name="pass_project_newest"),
        ]

    def __str__(self):
        return f"pass {self.pk} ({self.status})"

    @property
    def finished(self):
        return self.status in (PassStatus.DONE, PassStatus.FAILED)

    @property
    def progress(self):
        """Fraction of the selected runs finished (1.0 for a finished or empty pass)."""
        if self.status == PassStatus.DONE or not self.total:
            return 1.0 if self.status == PassStatus.DONE else 0.0
        return min(1.0, self.done / self.total)


class ChunkStatus(models.TextChoices):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


class ScoringChunk(models.Model):
    """A slice of a pass's runs that one worker takes at a time.

    A worker claims a chunk by compare-and-set (queued, or running with an expired
    lease, or already held by the same task message) and marks it done by
    compare-and-set on its claim ``token``; a claim that is not renewed within the
    lease is presumed lost with its worker, and the chunk is taken again.
    """

    scoring_pass = models.ForeignKey(ScoringPass, on_delete=models.CASCADE, related_name="chunks")
    ordinal = models.PositiveIntegerField()
    # Primary keys of the chunk's runs, in the pass's order (newest first).
    trace_pks = models.JSONField(default=list)
    runs = models.PositiveIntegerField(default=0)
    status = models.CharField(max_length=10, choices=ChunkStatus.choices, default=ChunkStatus.QUEUED)
    # The task id of the claim; the same message redelivered may take its chunk back.
    token = models.CharField(max_length=64, blank=True, default="")
    # host:pid of the worker process that holds (or last held) the claim.
    claimed_by = models.CharField(max_length=255, blank=True, default="")
    lease_until = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    dispatched_at = models.DateTimeField(null=True, blank=True)
    # Counted in the transaction that writes the rows they count.
    written = models.PositiveIntegerField(default=0)
    skipped = models.PositiveIntegerField(default=0)
    existing = models.PositiveIntegerField(default=0)
    # A dry run writes nothing, so what it would have written is kept here (capped).
    report = models.JSONField(default=dict, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["scoring_pass", "ordinal"]
        constraints = [
            models.UniqueConstraint(fields=["scoring_pass", "ordinal"], name="chunk_unique_pass_ordinal"),
        ]
        indexes = [
            # Finishing a chunk asks whether any of its pass's chunks is left.
            models.Index(fields=["scoring_pass", "status"], name="chunk_pass_status"),
        ]

    def __str__(self):
        return f"pass {self.scoring_pass_id} chunk {self.ordinal} ({self.status})"


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
        # Moved from the evalsite app with its table: the name stays.
        db_table = "evalsite_judgeconfig"
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


class LabelKind(models.TextChoices):
    BOOLEAN = "boolean"
    CATEGORICAL = "categorical"
    NUMERIC = "numeric"


class LabelConfig(models.Model):
    """What reviewers (and apps) may label a run with: a name, a kind, and what a passing label is.

    A label is a ``Score`` with source ``human`` and scorer ``label:<name>``. Boolean:
    true passes. Categorical: one of ``options``; those in ``passing`` pass. Numeric:
    ``minimum``..``maximum``; at least ``pass_threshold`` passes. Archived, never deleted:
    the labels already given keep their meaning. Every judge criterion has one of the
    same name (``criterion``), which its calibration reads.
    """

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="label_configs")
    name = models.CharField(max_length=100)
    description = models.TextField(blank=True, default="")
    kind = models.CharField(max_length=12, choices=LabelKind.choices, default=LabelKind.BOOLEAN)
    options = models.JSONField(default=list, blank=True)
    passing = models.JSONField(default=list, blank=True)
    minimum = models.FloatField(null=True, blank=True)
    maximum = models.FloatField(null=True, blank=True)
    pass_threshold = models.FloatField(null=True, blank=True)
    # Created with a judge criterion of the same name: its reviewers' labels calibrate the judge.
    criterion = models.BooleanField(default=False)
    archived = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["project", "name"]
        constraints = [models.UniqueConstraint(fields=["project", "name"], name="labelconfig_unique_project_name")]

    def __str__(self):
        return self.name

    @property
    def scorer_id(self):
        return f"label:{self.name}"


class QueueFilter(models.Model):
    """A saved view of the annotation queue: which runs (or cases) reviewers go through, one at a time."""

    class Kind(models.TextChoices):
        RUNS = "runs"
        CASES_NEEDING_ANSWER = "cases_needing_answer"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="queue_filters")
    name = models.CharField(max_length=100)
    kind = models.CharField(max_length=24, choices=Kind.choices, default=Kind.RUNS)
    dataset = models.ForeignKey("datasets.Dataset", null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    experiment = models.ForeignKey(
        "datasets.Experiment", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    failed_scorer = models.CharField(max_length=100, blank=True, default="")
    abstained_scorer = models.CharField(max_length=100, blank=True, default="")
    # Runs without a label of this config (by anyone).
    unlabeled = models.ForeignKey(LabelConfig, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    # Runs where this judge criterion and reviewers' labels disagree.
    disagreement = models.CharField(max_length=100, blank=True, default="")
    feedback = models.CharField(max_length=300, blank=True, default="")  # runs with this feedback (name:value)
    # A fixed list of runs (trace pks), e.g. those that drove a monitor's alert; null: no such list.
    runs = models.JSONField(null=True, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    # Team review (scoring.review.assignment): who takes items (none: anyone), how many label each, blind.
    assignees = models.ManyToManyField(settings.AUTH_USER_MODEL, blank=True, related_name="+")
    reviewers_per_item = models.PositiveSmallIntegerField(default=1, db_default=1)
    blind = models.BooleanField(default=False, db_default=False)

    class Meta:
        ordering = ["project", "name"]
        constraints = [models.UniqueConstraint(fields=["project", "name"], name="queuefilter_unique_project_name")]

    def __str__(self):
        return self.name


class QueueItem(models.Model):
    """A reviewer's hold on, or verdict about, one item of a queue.

    Claimed with a lease so two reviewers are not shown the same item at once; ``done``
    once labelled, captured, edited or skipped in this queue (progress counts these).
    ``item`` is the run's trace pk, or the case's pk for a cases queue.
    """

    queue = models.ForeignKey(QueueFilter, on_delete=models.CASCADE, related_name="items")
    item = models.BigIntegerField()
    claimed_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    lease_until = models.DateTimeField(null=True, blank=True)
    done = models.BooleanField(default=False)
    outcome = models.CharField(max_length=20, blank=True, default="")  # labelled | skipped | captured | edited
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["queue", "item"], name="queueitem_unique_queue_item")]
        indexes = [models.Index(fields=["queue", "done"], name="queueitem_queue_done")]


class PendingFeedback(models.Model):
    """Feedback on a run not arrived yet: a score once it is ingested, one per trace_id, name, user (newest wins)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+", db_index=False)
    trace_id = models.CharField(max_length=200)
    name = models.CharField(max_length=100)
    value = models.JSONField()
    comment = models.TextField(blank=True, default="")
    user_id = models.CharField(max_length=200, blank=True, default="")
    received_at = models.DateTimeField()

    class Meta:
        constraints = [
            # Also the index the attach step reads by (project, trace_id in the arrived runs).
            models.UniqueConstraint(
                fields=["project", "trace_id", "name", "user_id"], name="pendingfeedback_unique_run_name_user"
            ),
        ]
        indexes = [models.Index(fields=["received_at"], name="pendingfeedback_received")]  # the sweep drops old ones

    def __str__(self):
        return f"{self.trace_id}: {self.name}"


from scoring.queue_reviews import QueueReview  # noqa: E402, F401
