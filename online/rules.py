"""Online rules: create and change them, and the tick that scores the runs that arrived.

A tick (``rule_tick``, run by workers every ``EVALSITE_ONLINE_TICK_SECONDS``, never in
a request) looks at the runs ingested since the rule was made (the API, OTLP traces and
logs alike) with an id above the rule's high-water mark less ``SCAN_MARGIN``, keeps the
ones its filter matches and has not seen, and records each (``OnlineSample``, unique per
rule and run, under the rule's row lock: each run counts once however many ticks or
workers look at it). A run is sampled when the hash of its trace id falls under the
rate (the same run is in or out on every look, and a 10% sample is inside a 20% one);
the sampled ones are scored by one background scoring pass per tick, with the quota,
the judge's limits and the pass's crash safety. ``rule_backfill`` does the same over
runs started in a time range.
"""

import hashlib
from datetime import datetime

from django.db import transaction
from django.db.models import Count, Max, Q, Sum
from django.utils import timezone

from datasets.models import Trace
from evalsite.bulk import datetime_adapter, rows_insert_new
from evalsite.errors import Invalid, NotFound
from online.models import OnlineRule, OnlineSample
from scoring.models import Abstention, ScoringPass
from scoring.passes.services import pass_start
from scoring.selection.requests import score_request_read

# Run ids looked at again below the high-water mark: a run whose transaction committed
# after a later one is still seen. A tick reads at most TICK_BATCH runs per rule, more
# than the margin, so it always moves on.
SCAN_MARGIN = 2_000
TICK_BATCH = 10_000
# Batches one tick works through per rule before it lets the next tick (and the other
# rules) go: 20 x 10,000 runs, far more than one web process ingests between two ticks.
TICK_MAX_BATCHES = 20
FILTER_TEXT_FIELDS = ("name", "experiment", "session", "user")
_DB_FIELDS = {"name": "name", "session": "session_id", "user": "user_id"}


def sample_takes(trace_id, rate):
    """Whether the sample of ``rate`` takes the run ``trace_id`` (deterministic, nested across rates)."""
    digest = hashlib.sha256(trace_id.encode()).digest()
    return int.from_bytes(digest[:8], "big") < rate * 2**64


def _error(field, message):
    return Invalid(f"{field}: {message}", errors=[{"field": field, "message": message}])


def _filter_clean(value):
    if not isinstance(value, dict):
        raise _error("filter", "must be an object")
    unknown = sorted(set(value) - {*FILTER_TEXT_FIELDS, "tags", "metadata"})
    if unknown:
        raise _error(
            f"filter.{unknown[0]}", f"unknown filter; use {', '.join((*FILTER_TEXT_FIELDS, 'tags', 'metadata'))}"
        )
    for name in FILTER_TEXT_FIELDS:
        if name in value and (not isinstance(value[name], str) or not 0 < len(value[name]) <= 200):
            raise _error(f"filter.{name}", "must be a text of 1 to 200 characters")
    tags = value.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(t, str) and 0 < len(t) <= 200 for t in tags):
        raise _error("filter.tags", "must be a list of texts")
    if not isinstance(value.get("metadata", {}), dict):
        raise _error("filter.metadata", "must be an object of key: value")
    return value


def _rate_clean(value):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise _error("sample_rate", "must be a number from 0 to 1")
    return float(value)


def _name_clean(value):
    if not isinstance(value, str) or not 0 < len(value.strip()) <= 100:
        raise _error("name", "must be a text of 1 to 100 characters")
    return value.strip()


def _scorers_clean(project, scorers, config):
    # The same rules as a pass request: unknown scorers and bad configs are named here, not at scoring time.
    if not isinstance(scorers, list) or not scorers:
        raise _error("scorers", "is required: a list of scorers, as in POST /v1/api/passes")
    if not isinstance(config, dict):
        raise _error("config", "must be an object of scorer: config")
    score_request_read(project=project, data={"scorers": scorers, "config": config, "limit": 1}, background=True)
    return scorers, config


def rule_create(*, project, data, user=None):
    """A new rule from ``data`` (``name``, ``scorers``, optional ``config``, ``filter``, ``sample_rate``,
    ``paused``). It scores runs that arrive from now on; ``rule_backfill`` takes older ones."""
    name = _name_clean(data.get("name"))
    scorers, config = _scorers_clean(project, data.get("scorers"), data.get("config") or {})
    fields = {
        "filter": _filter_clean(data.get("filter") or {}),
        "sample_rate": _rate_clean(data.get("sample_rate", 1.0)),
        "paused": bool(data.get("paused", False)),
    }
    with transaction.atomic():
        if OnlineRule.objects.filter(project=project, name=name).exists():
            raise _error("name", f"a rule named {name!r} exists")
        high = Trace.objects.filter(project=project).aggregate(high=Max("pk"))["high"] or 0
        return OnlineRule.objects.create(
            project=project, name=name, scorers=scorers, config=config, scanned_pk=high, created_by=user, **fields
        )


def rule_update(*, rule, data):
    """Change any of ``name``, ``scorers``/``config``, ``filter``, ``sample_rate``, ``paused``."""
    changes = {}
    if "name" in data:
        changes["name"] = _name_clean(data["name"])
    if "scorers" in data or "config" in data:
        changes["scorers"], changes["config"] = _scorers_clean(
            rule.project, data.get("scorers", rule.scorers), data.get("config", rule.config)
        )
    if "filter" in data:
        changes["filter"] = _filter_clean(data["filter"])
    if "sample_rate" in data:
        changes["sample_rate"] = _rate_clean(data["sample_rate"])
    if "paused" in data:
        changes["paused"] = bool(data["paused"])
    with transaction.atomic():
        if "name" in changes and OnlineRule.objects.filter(project=rule.project, name=changes["name"]).exclude(
            pk=rule.pk
        ):
            raise _error("name", f"a rule named {changes['name']!r} exists")
        OnlineRule.objects.filter(pk=rule.pk).update(**changes)
    rule.refresh_from_db()
    return rule


def rule_get(*, project, rule_id):
    rule = OnlineRule.objects.filter(project=project, pk=rule_id).first()
    if rule is None:
        raise NotFound("No such online rule in this project.")
    return rule


def _runs_matching(rule, runs):
    """The runs of ``runs`` (a Trace queryset) the rule's filter keeps, as ``(pk, trace_id)``."""
    flt = rule.filter
    for name, column in _DB_FIELDS.items():
        if name in flt:
            runs = runs.filter(**{column: flt[name]})
    if "experiment" in flt:
        runs = (
            runs.filter(experiment__isnull=True)
            if flt["experiment"] == "none"
            else runs.filter(experiment__name=flt["experiment"])
        )
    tags, metadata = set(flt.get("tags", [])), flt.get("metadata", {})
    if not tags and not metadata:
        return list(runs.values_list("pk", "trace_id"))
    return [
        (pk, trace_id)
        for pk, trace_id, run_tags, run_metadata in runs.values_list("pk", "trace_id", "tags", "metadata")
        if tags <= set(run_tags or []) and all((run_metadata or {}).get(k) == v for k, v in metadata.items())
    ]


def _record(rule, matched, queue=""):
    """Record ``matched`` runs (not seen before) as samples and score the sampled ones in one pass."""
    sampled = [trace_id for _, trace_id in matched if sample_takes(trace_id, rule.sample_rate)]
    scoring_pass, error = None, ""
    if sampled:
        try:
            scoring_pass = pass_start(
                project=rule.project,
                data={"scorers": rule.scorers, "config": rule.config, "trace_ids": sampled},
                queue=queue,
            )
        except Invalid as exc:
            error = exc.detail
    taken, pass_id, now = set(sampled), scoring_pass.pk if scoring_pass else None, datetime_adapter()(timezone.now())
    # COPY, not bulk_create: building 10,000 model instances and their INSERT was most of
    # a tick's time. Under the rule's lock, with the seen runs left out, every row is new.
    rows_insert_new(
        OnlineSample._meta.db_table, ("rule_id", "trace_id", "sampled", "scoring_pass_id", "created_at"),
        [(rule.pk, pk, trace_id in taken, pass_id, now) for pk, trace_id in matched],
        unique=("rule_id", "trace_id"), expect_new=True,
    )  # fmt: skip
    if error != rule.last_error and (error or sampled):
        rule.last_error = error
        rule.save(update_fields=["last_error"])
    return len(sampled)


def _batch_tick(rule_id, queue):
    """One batch of a rule's tick: ``(matched, sampled, full)``; ``full`` when more runs wait."""
    with transaction.atomic():
        rule = OnlineRule.objects.select_for_update().select_related("project").filter(pk=rule_id).first()
        if rule is None or rule.paused:
            return 0, 0, False
        low = max(0, rule.scanned_pk - SCAN_MARGIN)
        arrived = Trace.objects.filter(project_id=rule.project_id, ingested_at__gte=rule.created_at)
        pks = list(arrived.filter(pk__gt=low).order_by("pk").values_list("pk", flat=True)[:TICK_BATCH])
        if not pks:
            return 0, 0, False
        # A range, not a list of ids: the batch is every arrived run from low to its last id.
        batch = arrived.filter(pk__gt=low, pk__lte=pks[-1])
        seen = OnlineSample.objects.filter(rule=rule, trace_id__gt=low, trace_id__lte=pks[-1]).values("trace_id")
        matched = _runs_matching(rule, batch.exclude(pk__in=seen))
        sampled = _record(rule, matched, queue) if matched else 0
        if pks[-1] > rule.scanned_pk:
            OnlineRule.objects.filter(pk=rule.pk).update(scanned_pk=pks[-1])
    return len(matched), sampled, len(pks) == TICK_BATCH


def rule_tick(*, rule_id, queue="", max_batches=TICK_MAX_BATCHES):
    """Score what arrived for one rule since its last tick; returns ``(matched, sampled)``. Safe to run twice.

    Batches of ``TICK_BATCH`` runs, each in its own transaction (its row lock held that
    long only) with its own pass, until the rule has caught up or ``max_batches`` ran:
    a burst of arrivals is worked through in one tick instead of one batch per tick.
    """
    matched = sampled = 0
    for _ in range(max_batches):
        batch_matched, batch_sampled, full = _batch_tick(rule_id, queue)
        matched, sampled = matched + batch_matched, sampled + batch_sampled
        if not full:
            break
    return matched, sampled


def rules_tick(*, queue=""):
    """One tick of every active rule (their passes sent to ``queue``); returns the number of runs sampled."""
    active = OnlineRule.objects.filter(paused=False).values_list("pk", flat=True)
    return sum(rule_tick(rule_id=pk, queue=queue)[1] for pk in active)


def rule_backfill(*, rule_id, started_from, started_to):
    """Score the rule's matches among runs started in ``[started_from, started_to)`` (seen ones once only);
    returns ``(matched, sampled)``."""
    if not isinstance(started_from, datetime) or not isinstance(started_to, datetime) or started_from >= started_to:
        raise _error("to", "must be after from")
    with transaction.atomic():
        rule = OnlineRule.objects.select_for_update().select_related("project").get(pk=rule_id)
        runs = Trace.objects.filter(project_id=rule.project_id, started_at__gte=started_from, started_at__lt=started_to)
        matched = _runs_matching(rule, runs.exclude(pk__in=OnlineSample.objects.filter(rule=rule).values("trace_id")))
        return len(matched), (_record(rule, matched) if matched else 0)


def rule_list(*, project):
    """The project's online rules, by name."""
    return OnlineRule.objects.filter(project=project)


def rule_backfill_request(*, rule, started_from, started_to):
    """Ask a worker to backfill ``rule`` over ``[started_from, started_to)`` once the caller's transaction commits.

    Safe to ask twice: the backfill scores only runs the rule has not seen (``rule_backfill``).
    """
    from online.tasks import rule_backfill_task  # the task imports this module

    args = (rule.pk, started_from.isoformat(), started_to.isoformat())
    transaction.on_commit(lambda: rule_backfill_task.delay(*args))


def rule_counts(rule):
    """What the rule did: runs matched, sampled, scores written and skipped, skips by reason, passes."""
    samples = OnlineSample.objects.filter(rule=rule).aggregate(
        matched=Count("pk"), sampled=Count("pk", filter=Q(sampled=True))
    )
    pass_ids = OnlineSample.objects.filter(rule=rule, scoring_pass__isnull=False).values("scoring_pass")
    passes = ScoringPass.objects.filter(pk__in=pass_ids).aggregate(
        scored=Sum("written"), skipped=Sum("skipped"), passes=Count("pk")
    )
    reasons = dict(
        Abstention.objects.filter(scoring_pass__in=pass_ids)
        .values_list("reason")
        .annotate(n=Count("pk"))
        .order_by("-n")
        .values_list("reason", "n")[:10]
    )
    return {
        "matched": samples["matched"],
        "sampled": samples["sampled"],
        "scored": passes["scored"] or 0,
        "skipped": passes["skipped"] or 0,
        "skipped_reasons": reasons,
        "passes": passes["passes"],
    }
