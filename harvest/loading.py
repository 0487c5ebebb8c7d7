"""The failing production runs of a project, read in bulk and turned into ``grouping.FailingRun``.

A production run (of no experiment) fails when it has a failed check (a built-in or
judge score that did not pass), negative end-user feedback (a ``feedback`` score that
did not pass: thumbs down, a rating under 0.5), a judge abstention (an abstention of a
scorer that is not a built-in: a judge criterion), or status ``error``. Human labels
are reviewers' ground truth, not failures of the run, and are left out. Stale check
scores (computed before a late span arrived) are left out like everywhere else; an end
user's feedback stands as given, as monitors count it: it judged what the user saw, and
no pass replaces it.
"""

from dataclasses import dataclass, field
from datetime import datetime

from checks.scorers import SCORERS
from datasets.models import RunStatus, Span, SpanKind, Trace
from evalsite.bulk import json_loads, json_text
from harvest.grouping import FailingRun, error_type, input_text, signature_parts, signature_text
from scoring.feedback import FEEDBACK_PREFIX
from scoring.freshness import scores_standing
from scoring.models import Abstention, AbstentionKind, Score, ScoreSource

CHUNK = 5000
REASON_MAX = 300


@dataclass
class Failure:
    pk: int
    started_at: datetime = None
    failed: set = field(default_factory=set)
    feedback: set = field(default_factory=set)
    abstained: set = field(default_factory=set)
    reasons: list = field(default_factory=list)
    errored: bool = False
    parts: dict = None
    run: FailingRun = None


def _chunks(items):
    items = list(items)
    for start in range(0, len(items), CHUNK):
        yield items[start : start + CHUNK]


def _scores(scores, found):
    rows = scores_standing(scores.filter(passed=False).exclude(source=ScoreSource.HUMAN)).values_list(
        "trace_id", "scorer", "reason", "source"
    )
    for pk, scorer, reason, source in rows:
        failure = found.setdefault(pk, Failure(pk))
        if source == ScoreSource.FEEDBACK:
            failure.feedback.add(scorer.removeprefix(FEEDBACK_PREFIX))
        else:
            failure.failed.add(scorer)
        if reason:
            failure.reasons.append((scorer, reason[:REASON_MAX]))


def _abstentions(abstentions, found):
    rows = (
        abstentions.filter(kind=AbstentionKind.ABSTAINED)
        .exclude(scorer__in=list(SCORERS))
        .values_list("trace_id", "scorer", "reason")
    )
    for pk, scorer, reason in rows:
        failure = found.setdefault(pk, Failure(pk))
        failure.abstained.add(scorer)
        failure.reasons.append((f"abstained:{scorer}", reason))


def _runs_and_tools(found):
    """Each failure's run (input, status, error, start) and its tool calls in order, into a ``FailingRun``."""
    for chunk in _chunks(found):
        tools = {}
        spans = Span.objects.filter(trace_id__in=chunk, kind=SpanKind.TOOL).order_by("trace_id", "started_at", "id")
        for pk, name in spans.values_list("trace_id", "name"):
            tools.setdefault(pk, []).append(name)
        rows = (
            Trace.objects.filter(pk__in=chunk)
            .annotate(input_text=json_text("input"))
            .values_list("pk", "input_text", "status", "error", "started_at")
        )
        for pk, text, status, error, started_at in rows:
            value = json_loads(text)
            failure = found[pk]
            failure.started_at = started_at
            kind = error_type(status, error) if status == RunStatus.ERROR else ""
            failure.parts = signature_parts(
                failed=failure.failed, feedback=failure.feedback, abstained=failure.abstained,
                tools=tools.get(pk, []), error=kind,
            )  # fmt: skip
            if kind:
                failure.reasons.append(("status error", (error or "error")[:REASON_MAX]))
            failure.run = FailingRun(pk, signature_text(failure.parts), input_text(value), tuple(failure.reasons))


def _read(project_id, since, pks, found):
    production = {"project_id": project_id, "trace__experiment__isnull": True, "trace__started_at__gte": since}
    if pks is not None:
        production["trace_id__in"] = pks
    _scores(Score.objects.filter(**production), found)
    _abstentions(Abstention.objects.filter(**production), found)
    runs = Trace.objects.filter(project_id=project_id, experiment__isnull=True, started_at__gte=since)
    runs = runs.filter(pk__in=pks) if pks is not None else runs
    for pk in runs.filter(status=RunStatus.ERROR).values_list("pk", flat=True):
        found.setdefault(pk, Failure(pk)).errored = True


def failures_load(*, project_id, since, pks=None):
    """``{trace pk: Failure}`` of the project's failing production runs started at ``since`` or later (among
    the trace pks ``pks`` when given), in pk order."""
    found = {}
    if pks is None:
        _read(project_id, since, None, found)
    for chunk in _chunks(sorted(pks or ())):
        _read(project_id, since, chunk, found)
    found = dict(sorted(found.items()))
    _runs_and_tools(found)
    return {pk: failure for pk, failure in found.items() if failure.run is not None}
