"""Merge exported OpenTelemetry spans into runs: one run per trace id, in one transaction.

Spans of one trace may come in several exports, in any order, and again on retries:

- **One run per trace id.** The run's ``trace_id`` is the 32-digit lowercase hex id and
  its ``source`` is ``otlp``. It is created by the first export that brings one of its
  spans (``INSERT ... ON CONFLICT DO NOTHING``, so two exports racing to create it make
  one run; new runs are inserted in ``trace_id`` order) and then locked (``SELECT ... FOR
  UPDATE`` in primary key order, the order scoring passes lock runs in too, so no two
  writers wait on each other in a cycle) while its spans are merged and its own fields
  recomputed (``runs``). Concurrent exports of one trace, from any number of processes,
  queue on that lock; SQLite's IMMEDIATE transactions serialise them anyway. A scoring
  pass that loaded the run before the lock sees the change and does not write from old
  data.
- **Re-sent spans are not duplicated.** A span with the (trace, span_id) of a stored
  one replaces it when its content differs (the later copy wins: an SDK that re-exports
  a span sends its final state) and is ignored when equal (a plain retry changes nothing).
- **Scores go stale.** When a run gains or changes a span, its ``revision`` is bumped
  in the same transaction: scores computed on an older revision describe a run that no
  longer exists, and scoring reads them as stale and replaces them on its next pass.
- **Quota.** Each *new run* counts one against the project's ``quota_per_minute``
  (spans of known runs are free). Over quota, the whole export is refused (429 with
  ``Retry-After``) and nothing is written.
- **Rejected spans.** A span that cannot be used (see ``mapping``), one whose trace id
  names a run sent through ``/v1/api/traces``, one whose tokens price beyond what a cost
  can hold (``costs``), or one past ``MAX_SPANS_PER_RUN`` spans in its run is counted as
  rejected with a reason; the others are written.
- **Overload.** A database that does not answer in time (a lock wait that ends in a
  timeout or deadlock, SQLite's busy timeout, a lost connection) is reported as
  ``Overloaded`` (503 with ``Retry-After``): the exporter retries and the rolled-back
  export loses nothing.
"""

from dataclasses import dataclass, field

from django.conf import settings
from django.db import OperationalError, connection, transaction
from django.db.models import Count, F
from django.utils import timezone

from datasets.ingestion import SPAN_COLUMNS
from datasets.models import Span, Trace, TraceSource
from datasets.otlp.costs import spans_price
from datasets.otlp.errors import Overloaded
from datasets.otlp.locks import traces_lock
from datasets.otlp.log_ingestion import spans_join_logs
from datasets.otlp.mapping import SpanRejected, span_map
from datasets.otlp.runs import runs_recompute
from datasets.otlp.tool_calls import MARK as DERIVED_MARK
from datasets.run_schema import MAX_SPANS_PER_RUN
from evalsite.bulk import datetime_adapter, db_decimal, db_json, rows_insert
from evalsite.metrics import RUNS_INGESTED, counted_on_commit
from evalsite.quota import quota_reserve
from evalsite.sql import rows_named

RETRY_AFTER_SECONDS = 1
_CHUNK = 500


@dataclass
class ExportOutcome:
    """What one export did: spans taken and rejected, runs created, and why anything was refused."""

    accepted: int = 0
    rejected: int = 0
    problems: list = field(default_factory=list)  # rejections and warnings, as sentences
    created: list = field(default_factory=list)  # trace ids of the new runs
    updated: list = field(default_factory=list)  # trace ids of existing runs that changed


def otlp_spans_ingest(*, project, spans):
    """Map and merge ``spans`` (decoded ``OtlpSpan``s) into the project's runs.

    Atomic: the accepted spans and their runs are all written, or nothing is. Returns
    an ``ExportOutcome``. Raises ``QuotaExceeded`` (429) or ``Overloaded`` (503),
    writing nothing. Idempotent: the same export sent twice writes nothing the second
    time and leaves every revision as it was.
    """
    outcome = ExportOutcome()
    by_trace = {}
    for span in spans:
        try:
            mapped = span_map(span)
        except SpanRejected as exc:
            outcome.rejected += 1
            outcome.problems.append(f"{span.where}: {exc}")
            continue
        if mapped.trace_id not in by_trace and len(by_trace) >= settings.EVALSITE_MAX_BATCH:
            outcome.rejected += 1
            outcome.problems.append(
                f"{span.where}: this export already has spans of {settings.EVALSITE_MAX_BATCH} runs, "
                "the most one export may carry (EVALSITE_MAX_BATCH)"
            )
            continue
        # The same span twice in one export: the later copy wins, as across exports.
        by_trace.setdefault(mapped.trace_id, {})[mapped.span_id] = mapped
    if not by_trace:
        return outcome
    try:
        with transaction.atomic():
            traces_lock(project, by_trace)
            spans_join_logs(project, by_trace)
            priced_out = spans_price(project, by_trace)
            outcome.rejected += len(priced_out)
            outcome.problems += priced_out
            _merge(project, by_trace, outcome)
    except OperationalError as exc:
        # Lock timeouts, deadlocks, "database is locked", lost connections: all
        # transient, all rolled back; the exporter retries after Retry-After.
        raise Overloaded(
            f"The database could not take this export now ({exc.__class__.__name__}); retry.",
            retry_after=RETRY_AFTER_SECONDS,
        ) from exc
    return outcome


def _merge(project, by_trace, outcome):
    trace_ids = sorted(by_trace)
    known = set(Trace.objects.filter(project=project, trace_id__in=trace_ids).values_list("trace_id", flat=True))
    starts = {t: min(s.started_at for s in by_trace[t].values()) for t in trace_ids if t not in known}
    created = set(_traces_create(project, starts))
    traces = list(Trace.objects.select_for_update().filter(project=project, trace_id__in=trace_ids).order_by("pk"))

    mine = _otlp_runs(traces, by_trace, outcome)
    stored = _stored_spans(mine, by_trace)
    # Tool spans derived from the model calls (``tool_calls``) are not the exporter's: they take no room.
    counts = dict(
        Span.objects.filter(trace__in=mine)
        .exclude(span_id__contains=DERIVED_MARK)
        .values("trace_id")
        .annotate(n=Count("id"))
        .values_list("trace_id", "n")
    )

    inserts, replaced, touched = [], [], []
    for trace in mine:
        room = MAX_SPANS_PER_RUN - counts.get(trace.pk, 0)
        changed = False
        over = 0
        for span_id, span in by_trace[trace.trace_id].items():
            old = stored.get((trace.pk, span_id))
            if old is not None:
                outcome.accepted += 1
                if _stored_row(old) != span.row():
                    replaced.append(old.pk)
                    inserts.append((trace.pk, span))
                    changed = True
            elif room > 0:
                room -= 1
                outcome.accepted += 1
                inserts.append((trace.pk, span))
                changed = True
            else:
                over += 1
        if over:
            outcome.rejected += over
            outcome.problems.append(
                f"run {trace.trace_id} already has {MAX_SPANS_PER_RUN} spans, the most a run may have "
                f"({over} span(s) rejected)"
            )
        if changed:
            touched.append(trace)
            (outcome.created if trace.trace_id in created else outcome.updated).append(trace.trace_id)

    # A changed span is written as a new row: one bulk delete and one bulk insert.
    for chunk in _chunks(replaced, _CHUNK):
        Span.objects.filter(pk__in=chunk).delete()
    db_datetime = datetime_adapter()
    rows_insert(Span._meta.db_table, SPAN_COLUMNS, [_span_row(pk, s, db_datetime) for pk, s in inserts])
    outcome.problems += runs_recompute(project=project, traces=touched)
    # A run that existed before this export changed: its scores describe an older run.
    Trace.objects.filter(pk__in=[t.pk for t in touched if t.trace_id not in created]).update(revision=F("revision") + 1)
    # Last, so the project's quota row is locked only for the end of the transaction.
    new_runs = len(created & {t.trace_id for t in touched})
    quota_reserve(project=project, count=new_runs)
    counted_on_commit(RUNS_INGESTED, new_runs, project=project.slug)


def _otlp_runs(traces, by_trace, outcome):
    """The runs that take spans; spans for runs sent to the runs API are rejected."""
    mine = []
    for trace in traces:
        if trace.source != TraceSource.OTLP:
            count = len(by_trace.pop(trace.trace_id))
            outcome.rejected += count
            outcome.problems.append(
                f"run {trace.trace_id} was sent to /v1/api/traces and does not take OpenTelemetry spans "
                f"({count} span(s) rejected)"
            )
        else:
            mine.append(trace)
    return mine


def _traces_create(project, starts):
    """Insert the runs that do not exist yet; returns the trace ids this call created.

    ``ON CONFLICT DO NOTHING ... RETURNING`` (PostgreSQL and SQLite 3.35+) tells exactly
    which rows this transaction inserted, so the quota counts only runs really created
    even when another export creates the same run at the same moment.
    """
    if not starts:
        return []
    now = timezone.now()
    names = (
        "project", "trace_id", "name", "status", "started_at", "metadata", "tags", "source", "content_hash",
        "ingested_at",
    )  # fmt: skip
    fields = [Trace._meta.get_field(n) for n in names]
    columns = ", ".join(connection.ops.quote_name(f.column) for f in fields)
    table = connection.ops.quote_name(Trace._meta.db_table)
    returning = connection.ops.quote_name(Trace._meta.get_field("trace_id").column)
    created = []
    with connection.cursor() as cursor:
        for chunk in _chunks(sorted(starts.items()), _CHUNK):
            params = []
            for trace_id, started_at in chunk:
                values = (project.pk, trace_id, "", "ok", started_at, {}, [], TraceSource.OTLP, "", now)
                params += [f.get_db_prep_save(v, connection) for f, v in zip(fields, values, strict=True)]
            placeholders = ", ".join(["(" + ", ".join(["%s"] * len(fields)) + ")"] * len(chunk))
            cursor.execute(
                f"INSERT INTO {table} ({columns}) VALUES {placeholders} ON CONFLICT DO NOTHING RETURNING {returning}",
                params,
            )
            created += [row.trace_id for row in rows_named(cursor)]
    return created


def _stored_spans(traces, by_trace):
    """``{(trace_pk, span_id): Span}`` for the stored spans that this export sends again."""
    wanted = {(t.pk, span_id) for t in traces for span_id in by_trace[t.trace_id]}
    trace_pks = [t.pk for t in traces]
    stored = {}
    for chunk in _chunks(sorted({span_id for _, span_id in wanted}), _CHUNK):
        for span in Span.objects.filter(trace_id__in=trace_pks, span_id__in=chunk):
            if (span.trace_id, span.span_id) in wanted:
                stored[(span.trace_id, span.span_id)] = span
    return stored


def _stored_row(span):
    return (
        span.parent_span_id, span.kind, span.name, span.input, span.output, span.status, span.error,
        span.started_at, span.ended_at, span.latency_ms, span.cost_cents, span.model, span.usage, span.attributes,
    )  # fmt: skip


def _span_row(trace_pk, s, db_datetime):
    return (
        trace_pk, s.span_id, s.parent_span_id, 0, s.kind, s.name, db_json(s.input), db_json(s.output), s.status,
        s.error, db_datetime(s.started_at), db_datetime(s.ended_at), s.latency_ms, db_decimal(s.cost_cents), s.model,
        db_json(s.usage), db_json(s.attributes),
    )  # fmt: skip


def _chunks(items, size):
    items = list(items)
    return (items[i : i + size] for i in range(0, len(items), size))
