"""Runs (traces and their spans), the experiments they are tagged with, and the golden cases curated from them."""

from django.conf import settings
from django.db import models

from evalsite.models import Project


class RunStatus(models.TextChoices):
    OK = "ok"
    ERROR = "error"


class SpanKind(models.TextChoices):
    LLM = "llm"
    TOOL = "tool"
    RETRIEVAL = "retrieval"
    AGENT = "agent"
    OTHER = "other"


class TraceSource(models.TextChoices):
    API = "api"
    OTLP = "otlp"


class Trace(models.Model):
    """One agent run. ``trace_id`` is the client's id, unique within the project."""

    # No separate index on project or experiment: the unique (project, trace_id) and the
    # (experiment, case) indexes lead with them, and every index slows ingestion.
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="traces", db_index=False)
    trace_id = models.CharField(max_length=200)
    name = models.CharField(max_length=200, blank=True, default="")
    input = models.JSONField(null=True, blank=True)
    output = models.JSONField(null=True, blank=True)
    status = models.CharField(max_length=10, choices=RunStatus.choices, default=RunStatus.OK)
    error = models.TextField(null=True, blank=True)
    started_at = models.DateTimeField()
    ended_at = models.DateTimeField(null=True, blank=True)
    latency_ms = models.PositiveBigIntegerField(null=True, blank=True)
    cost_cents = models.DecimalField(max_digits=14, decimal_places=6, null=True, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    tags = models.JSONField(default=list, blank=True)
    experiment = models.ForeignKey(
        "Experiment",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="traces",
        db_index=False,
    )
    case = models.ForeignKey("GoldenCase", null=True, blank=True, on_delete=models.SET_NULL, related_name="runs")
    source = models.CharField(max_length=10, choices=TraceSource.choices, default=TraceSource.API)
    # Which try of its case this run is, within its experiment (1, 2, ...). None: the
    # gate numbers such runs by start order. Two runs of one trial: the later counts.
    trial = models.PositiveIntegerField(null=True, blank=True)
    # Token totals of the run's model calls ({input_tokens, output_tokens, cache_read_tokens,
    # cache_write_tokens, total_tokens}), the models they used, and how cost_cents was
    # found ({"estimated", "sources"} or {"unknown_price": [models]}): OpenTelemetry runs.
    usage = models.JSONField(null=True, blank=True)
    models_used = models.JSONField(null=True, blank=True)
    cost_detail = models.JSONField(null=True, blank=True)
    # Who and which conversation the run belongs to (OpenTelemetry session.id, user.id,
    # gen_ai.conversation.id): a conversation's runs are read together.
    session_id = models.CharField(max_length=200, null=True, blank=True)
    user_id = models.CharField(max_length=200, null=True, blank=True)
    conversation_id = models.CharField(max_length=200, null=True, blank=True)
    # SHA-256 of the run as it was sent: a retry with the same content is recognised
    # as a no-op, different content under the same trace_id as a conflict.
    content_hash = models.CharField(max_length=64, blank=True, default="")
    # Bumped each time the run's content changes after it was stored (a span that
    # arrives late over OpenTelemetry). A score keeps the revision it was computed on,
    # so scoring sees a stale score by comparing the two; nothing here writes scores.
    revision = models.PositiveIntegerField(default=1, db_default=1)
    ingested_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "trace_id"], name="trace_unique_project_trace_id")]
        indexes = [
            # The runs list and scoring passes read a project's newest runs first.
            models.Index(fields=["project", "-started_at", "-id"], name="trace_project_newest"),
            # The gate and comparisons read an experiment's runs per case.
            models.Index(fields=["experiment", "case"], name="trace_experiment_case"),
            # The few runs that changed after they were stored: the only ones whose scores
            # can be stale (scoring.freshness looks them up here, not in every run).
            models.Index(fields=["id", "revision"], condition=models.Q(revision__gt=1), name="trace_revised"),
            # The runs list filtered to one session, user or conversation; partial, so runs
            # without one (most runs sent to the runs API) cost these indexes nothing.
            models.Index(
                fields=["project", "session_id", "-started_at"],
                condition=models.Q(session_id__isnull=False),
                name="trace_session",
            ),
            models.Index(
                fields=["project", "user_id", "-started_at"],
                condition=models.Q(user_id__isnull=False),
                name="trace_user",
            ),
            models.Index(
                fields=["project", "conversation_id", "-started_at"],
                condition=models.Q(conversation_id__isnull=False),
                name="trace_conversation",
            ),
        ]

    def __str__(self):
        return self.trace_id


class Span(models.Model):
    """One step of a run: a model call, a tool call, a retrieval, a sub-agent."""

    # Indexed by the unique (trace, span_id) constraint, which leads with it.
    trace = models.ForeignKey(Trace, on_delete=models.CASCADE, related_name="spans", db_index=False)
    span_id = models.CharField(max_length=100)
    # The parent's span_id within the same trace (not a foreign key: spans of one run
    # may arrive in any order over OpenTelemetry).
    parent_span_id = models.CharField(max_length=100, null=True, blank=True)
    # Order in which the client listed the span; breaks ties between equal start times.
    position = models.PositiveIntegerField(default=0)
    kind = models.CharField(max_length=10, choices=SpanKind.choices, default=SpanKind.OTHER)
    name = models.CharField(max_length=200, blank=True, default="")
    input = models.JSONField(null=True, blank=True)
    output = models.JSONField(null=True, blank=True)
    status = models.CharField(max_length=10, choices=RunStatus.choices, default=RunStatus.OK)
    error = models.TextField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    ended_at = models.DateTimeField(null=True, blank=True)
    latency_ms = models.PositiveBigIntegerField(null=True, blank=True)
    cost_cents = models.DecimalField(max_digits=14, decimal_places=6, null=True, blank=True)
    model = models.CharField(max_length=200, null=True, blank=True)
    usage = models.JSONField(null=True, blank=True)
    attributes = models.JSONField(default=dict, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["trace", "span_id"], name="span_unique_trace_span_id")]

    def __str__(self):
        return f"{self.kind}:{self.name or self.span_id}"


class SpanLog(models.Model):
    """An OTLP log record about one span (a GenAI event: a prompt, a choice), kept by trace and span id.

    Instrumentations send message content as log records next to the spans, in either
    order: the record is kept here whether or not its span has arrived, and the span's
    content is filled from the records of its span whenever either one arrives.
    """

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="span_logs", db_index=False)
    trace_id = models.CharField(max_length=32)  # 32 lowercase hex digits, as the run's trace_id
    span_id = models.CharField(max_length=16)
    name = models.CharField(max_length=200, blank=True, default="")  # the event name
    time_unix_nano = models.BigIntegerField(default=0)
    attributes = models.JSONField(default=dict, blank=True)
    body = models.JSONField(null=True, blank=True)
    # SHA-256 of the record as sent: an exporter's retry is not stored twice.
    digest = models.CharField(max_length=64)

    class Meta:
        # The unique constraint leads with (project, trace_id): the index every lookup uses.
        constraints = [
            models.UniqueConstraint(fields=["project", "trace_id", "span_id", "digest"], name="spanlog_unique_record")
        ]

    def __str__(self):
        return f"{self.name}@{self.trace_id}/{self.span_id}"


class ModelPrice(models.Model):
    """A project's own price for a model (self-hosted, negotiated), over the genai-prices table.

    In USD per million tokens; the cache prices default to the input price.
    """

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="model_prices", db_index=False)
    model = models.CharField(max_length=200)
    input_per_mtok = models.DecimalField(max_digits=14, decimal_places=6)
    output_per_mtok = models.DecimalField(max_digits=14, decimal_places=6)
    cache_read_per_mtok = models.DecimalField(max_digits=14, decimal_places=6, null=True, blank=True)
    cache_write_per_mtok = models.DecimalField(max_digits=14, decimal_places=6, null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["model"]
        constraints = [models.UniqueConstraint(fields=["project", "model"], name="modelprice_unique_project_model")]

    def __str__(self):
        return self.model


class Dataset(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="datasets")
    # One line of text (a branch name such as 123/merge works): see case_validation.
    name = models.CharField(max_length=100)
    description = models.TextField(blank=True, default="")
    archived = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [models.UniqueConstraint(fields=["project", "name"], name="dataset_unique_project_name")]

    def __str__(self):
        return self.name


class Experiment(models.Model):
    """One version of the agent (a commit, a branch, a model, a prompt): the tag a run carries.

    Created on first use by ingestion, so a run needs nothing above this app to be
    stored. Comparisons and the gate (``experiments``) read runs and scores by it.
    """

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="experiments")
    name = models.CharField(max_length=200)
    dataset = models.ForeignKey("Dataset", null=True, blank=True, on_delete=models.SET_NULL, related_name="experiments")
    # Free-form facts about the version: commit, branch, model, prompt version.
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        # Moved from the experiments app with its table: the name stays.
        db_table = "experiments_experiment"
        ordering = ["-created_at", "-id"]
        constraints = [models.UniqueConstraint(fields=["project", "name"], name="experiment_unique_project_name")]

    def __str__(self):
        return self.name


class CaseStatus(models.TextChoices):
    ACTIVE = "active"
    DRAFT = "draft"
    ARCHIVED = "archived"


class GoldenCase(models.Model):
    """A question the agent must keep answering right.

    ``expected_output`` is ``None`` until a reviewer writes the expected answer (a run's
    own answer is not taken as the expected one unless asked). ``source_trace_id``
    keeps the id of the run the case came from even after that run is deleted.
    """

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="cases")
    name = models.CharField(max_length=200)
    input = models.JSONField(null=True, blank=True)
    expected_output = models.JSONField(null=True, blank=True)
    expectations = models.JSONField(default=dict, blank=True)
    source_trace_id = models.CharField(max_length=200, null=True, blank=True)
    source_run = models.ForeignKey(
        Trace, null=True, blank=True, on_delete=models.SET_NULL, related_name="captured_cases"
    )
    status = models.CharField(max_length=10, choices=CaseStatus.choices, default=CaseStatus.ACTIVE)
    notes = models.TextField(blank=True, default="")
    # Free-form data that travels with the case (e.g. the scripted model turns of a test agent).
    metadata = models.JSONField(default=dict, blank=True)
    version = models.PositiveIntegerField(default=1)
    # A quarantined case is still run, scored and shown, but does not gate (a flaky
    # case being fixed); the reason is required and both changes are revisions.
    quarantined = models.BooleanField(default=False)
    quarantine_reason = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["dataset", "id"]
        constraints = [
            models.UniqueConstraint(fields=["dataset", "name"], name="case_unique_dataset_name"),
            # Capturing the same run twice into one dataset must not create a twin.
            models.UniqueConstraint(
                fields=["dataset", "source_trace_id"],
                condition=models.Q(source_trace_id__isnull=False),
                name="case_unique_dataset_source_trace",
            ),
            models.CheckConstraint(
                condition=models.Q(status__in=["active", "draft", "archived"]), name="case_status_known"
            ),
            models.CheckConstraint(condition=models.Q(version__gte=1), name="case_version_positive"),
        ]
        indexes = [
            # CI lists a dataset's active cases in id order (the cursor of the cases list).
            models.Index(fields=["dataset", "status", "id"], name="case_dataset_status_id"),
            # The review queue: cases still waiting for an expected answer.
            models.Index(
                fields=["dataset", "id"],
                condition=models.Q(expected_output__isnull=True),
                name="case_needs_expected_output",
            ),
            # A run's page lists the cases captured from it, in any dataset of the project.
            models.Index(
                fields=["source_trace_id"],
                condition=models.Q(source_trace_id__isnull=False),
                name="case_source_trace_id",
            ),
        ]

    def __str__(self):
        return self.name

    @property
    def needs_expected_output(self):
        return self.expected_output is None


class CaseRevision(models.Model):
    """One change to a case: who, when, and the values before and after."""

    class Action(models.TextChoices):
        CREATED = "created"
        UPDATED = "updated"
        ARCHIVED = "archived"
        RESTORED = "restored"

    case = models.ForeignKey(GoldenCase, on_delete=models.CASCADE, related_name="revisions")
    version = models.PositiveIntegerField()
    action = models.CharField(max_length=10, choices=Action.choices)
    changed_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    changed_by_key = models.ForeignKey(
        "evalsite.ApiKey", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    changed_at = models.DateTimeField(auto_now_add=True)
    old = models.JSONField(null=True, blank=True)
    new = models.JSONField(null=True, blank=True)
    # Why, when the change is not its own explanation: a release from quarantine.
    reason = models.TextField(blank=True, default="")

    class Meta:
        ordering = ["case", "version"]
        constraints = [models.UniqueConstraint(fields=["case", "version"], name="revision_unique_case_version")]
