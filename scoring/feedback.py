"""End users' feedback on runs: a score source of its own (``ScoreSource.FEEDBACK``).

A feedback is ``{name, value, comment?, user_id?}`` on a run named by its trace id. It is
stored as a ``Score`` with scorer ``feedback:<name>`` whose config is the user id, so
there is one per (run, name, user id) and the newest replaces the older; the same
feedback again changes nothing (a retry is safe). Values:

- ``true`` / ``false``: value 1 or 0, passed as given (a thumbs up passes);
- a number: meant on 0..1 (scale a rating: 4 of 5 stars is 0.75); stored clamped to
  0..1, passed from 0.5 up; the number as sent stays in ``detail.value``;
- a category (a string): neither good nor bad to evalsite, so value 0.5 and passed
  (it fails nothing); the category is ``detail.value``.

``detail`` keeps ``value`` as sent, its ``kind``, the ``user_id`` and when it was
received (``at``); the comment is the score's ``reason``.

Feedback may arrive before its run: it is then kept as a ``PendingFeedback`` and becomes
a score when the run is ingested (``feedback_attach``, called by the API and OTLP doors
once the runs are committed, and by this module after a pending row is committed, which
closes the race of the two arriving at once). A sweep in the workers
(``feedback_pending_sweep``, hourly) attaches any a crash left behind and drops pending
feedback older than ``EVALSITE_FEEDBACK_PENDING_DAYS`` (its run never came). New feedback
counts one record against the project's quota, when it first arrives.
"""

import hashlib
import math
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from checks.scorers.values import canonical_json, json_equal
from datasets.models import Trace
from evalsite.errors import NUL_MESSAGE, Invalid
from evalsite.models import Project
from evalsite.quota import quota_reserve
from scoring.models import PendingFeedback, Score, ScoreSource
from scoring.score_configs import score_configs_store

FEEDBACK_PREFIX = "feedback:"
NAME_MAX = 100
CATEGORY_MAX = 100
COMMENT_MAX = 2000
USER_ID_MAX = 200
FIELDS = ("name", "value", "comment", "user_id")
# A category: neither a pass nor a failure (see the module's docstring).
CATEGORY_VALUE = 0.5
NUMBER_PASSES_FROM = 0.5

BOOLEAN, NUMBER, CATEGORY = "boolean", "number", "category"


def feedback_scorer_id(name):
    return f"{FEEDBACK_PREFIX}{name}"


@dataclass(frozen=True)
class Feedback:
    name: str
    value: object
    comment: str
    user_id: str
    received_at: datetime

    @property
    def kind(self):
        if isinstance(self.value, bool):
            return BOOLEAN
        return CATEGORY if isinstance(self.value, str) else NUMBER

    def score_value(self):
        """``(value on 0..1, passed)`` of this feedback as a score."""
        if self.kind == BOOLEAN:
            return (1.0 if self.value else 0.0), self.value
        if self.kind == CATEGORY:
            return CATEGORY_VALUE, True
        clamped = min(1.0, max(0.0, float(self.value)))
        return clamped, clamped >= NUMBER_PASSES_FROM


# --- the rules of the input -------------------------------------------------------------


def feedback_clean(data, *, now=None):
    """A ``Feedback`` from the request body; ``Invalid`` naming every bad field, nothing written."""
    if not isinstance(data, dict):
        raise Invalid("The body must be a JSON object.", errors=[{"field": None, "message": "must be a JSON object"}])
    errors = [{"field": str(k), "message": "is not a known field"} for k in data if k not in FIELDS]
    name = data.get("name")
    if "name" not in data:
        errors.append({"field": "name", "message": "is required"})
    else:
        errors.extend(_text_problems("name", name, NAME_MAX, required=True))
    if "value" not in data:
        errors.append({"field": "value", "message": "is required"})
    else:
        errors.extend(_value_problems(data["value"]))
    for field, limit in (("comment", COMMENT_MAX), ("user_id", USER_ID_MAX)):
        if data.get(field) is not None:
            errors.extend(_text_problems(field, data[field], limit, required=False))
    if errors:
        raise Invalid("The feedback is invalid. Nothing was written.", errors=errors)
    return Feedback(
        name=name,
        value=data["value"],
        comment=data.get("comment") or "",
        user_id=data.get("user_id") or "",
        received_at=now or timezone.now(),
    )


def _text_problems(field, value, limit, *, required):
    if not isinstance(value, str):
        return [{"field": field, "message": "must be a string"}]
    if required and not value.strip():
        return [{"field": field, "message": "must not be blank"}]
    if len(value) > limit:
        return [{"field": field, "message": f"must be at most {limit} characters"}]
    if "\x00" in value:
        return [{"field": field, "message": NUL_MESSAGE}]
    return []


def _value_problems(value):
    if isinstance(value, bool):
        return []
    if isinstance(value, int | float):
        return [] if math.isfinite(value) else [{"field": "value", "message": "must be a finite number"}]
    if isinstance(value, str):
        return _text_problems("value", value, CATEGORY_MAX, required=True)
    return [
        {
            "field": "value",
            "message": f"must be true or false, a number, or a category of 1 to {CATEGORY_MAX} characters",
        }
    ]


# --- writes -------------------------------------------------------------------------------


def feedback_record(*, project, trace_id, feedback):
    """Record ``feedback`` on the project's run ``trace_id``, or keep it until the run arrives.

    Returns ``"scored"`` (written on the run, or already there as sent) or ``"pending"``.
    Idempotent: the same feedback again writes nothing; a newer one of the same (name,
    user id) replaces the older. New feedback reserves one record of the project's quota
    (``QuotaExceeded``, nothing written). The run, when there is one, is locked while its
    score is written, like every writer of scores.
    """
    for attempt in range(2):
        try:
            with transaction.atomic():
                trace = Trace.objects.select_for_update().filter(project=project, trace_id=trace_id).first()
                if trace is not None:
                    _score_write(project, trace, feedback, reserve=True)
                    return "scored"
                _pending_write(project, trace_id, feedback)
                transaction.on_commit(lambda: feedback_attach(project=project, trace_ids=[trace_id]))
                return "pending"
        except IntegrityError:
            # The same feedback written at the same moment by another request: the second
            # attempt sees it stored.
            if attempt:
                raise
    raise AssertionError("unreachable")


def feedback_attach(*, project, trace_ids):
    """Turn the pending feedback on runs ``trace_ids`` that have now arrived into scores.

    Returns how many became scores. One query when none is pending (the common case);
    safe to run twice or at once from two processes (the run is locked, and a feedback
    already written is left as it is). Quota was counted when the feedback arrived.
    """
    trace_ids = [t for t in trace_ids if t and "\x00" not in t]
    if not trace_ids:
        return 0
    waiting = set(
        PendingFeedback.objects.filter(project=project, trace_id__in=trace_ids).values_list("trace_id", flat=True)
    )
    attached = 0
    for trace_id in sorted(waiting):
        with transaction.atomic():
            trace = Trace.objects.select_for_update().filter(project=project, trace_id=trace_id).first()
            if trace is None:
                continue
            rows = list(
                PendingFeedback.objects.select_for_update().filter(project=project, trace_id=trace_id).order_by("id")
            )
            for row in rows:
                feedback = Feedback(row.name, row.value, row.comment, row.user_id, row.received_at)
                _score_write(project, trace, feedback, reserve=False)
            PendingFeedback.objects.filter(pk__in=[r.pk for r in rows]).delete()
            attached += len(rows)
    return attached


SWEEP_RUNS = 1000


def feedback_pending_sweep(*, now=None):
    """Attach pending feedback whose run has arrived, drop what waited too long: ``(attached, dropped)``.

    The catch-up for a process that stopped between committing a run and attaching its
    feedback. Bounded (``SWEEP_RUNS`` runs a sweep) and safe from several workers at once.
    """
    arrived = Trace.objects.filter(project_id=OuterRef("project_id"), trace_id=OuterRef("trace_id"))
    rows = PendingFeedback.objects.filter(Exists(arrived)).values_list("project_id", "trace_id").distinct()
    by_project = {}
    for project_id, trace_id in rows[:SWEEP_RUNS]:
        by_project.setdefault(project_id, []).append(trace_id)
    attached = sum(
        feedback_attach(project=project, trace_ids=by_project[project.pk])
        for project in Project.objects.filter(pk__in=by_project)
    )
    cutoff = (now or timezone.now()) - timedelta(days=settings.EVALSITE_FEEDBACK_PENDING_DAYS)
    dropped, _ = PendingFeedback.objects.filter(received_at__lt=cutoff).delete()
    return attached, dropped


def _pending_write(project, trace_id, feedback):
    row = (
        PendingFeedback.objects.select_for_update()
        .filter(project=project, trace_id=trace_id, name=feedback.name, user_id=feedback.user_id)
        .first()
    )
    if row is None:
        quota_reserve(project=project, count=1)
        PendingFeedback.objects.create(
            project=project, trace_id=trace_id, name=feedback.name, value=feedback.value, comment=feedback.comment,
            user_id=feedback.user_id, received_at=feedback.received_at,
        )  # fmt: skip
        return
    if row.received_at <= feedback.received_at:
        row.value, row.comment, row.received_at = feedback.value, feedback.comment, feedback.received_at
        row.save(update_fields=["value", "comment", "received_at"])


def _score_write(project, trace, feedback, *, reserve):
    """Write (or replace, when older) the run's score for ``feedback``; the caller holds the run's lock."""
    key = canonical_json({"user_id": feedback.user_id})
    digest = hashlib.sha256(key.encode()).hexdigest()
    scorer = feedback_scorer_id(feedback.name)
    value, passed = feedback.score_value()
    detail = {
        "value": feedback.value,
        "kind": feedback.kind,
        "user_id": feedback.user_id,
        "at": feedback.received_at.isoformat(timespec="microseconds"),
    }
    score = Score.objects.filter(trace=trace, scorer=scorer, scorer_version="1", config_hash=digest).first()
    if score is None:
        if reserve:
            quota_reserve(project=project, count=1)
        score_configs_store(project_id=project.pk, configs={digest: key})
        Score.objects.create(
            project=project, trace=trace, scorer=scorer, scorer_version="1", config_hash=digest, value=value,
            passed=passed, reason=feedback.comment, source=ScoreSource.FEEDBACK, experiment_id=trace.experiment_id,
            case_id=trace.case_id, run_revision=trace.revision, detail=detail,
        )  # fmt: skip
        return
    same = json_equal(score.detail.get("value"), feedback.value) and score.reason == feedback.comment
    if same or score.detail.get("at", "") > detail["at"]:
        return
    score.value, score.passed, score.reason, score.detail = value, passed, feedback.comment, detail
    score.run_revision = trace.revision
    score.save(update_fields=["value", "passed", "reason", "detail", "run_revision"])


def run_feedback(trace):
    """The run's feedback, newest first."""
    return trace.scores.filter(source=ScoreSource.FEEDBACK).order_by("-created_at", "-id")
