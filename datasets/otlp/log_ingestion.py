"""Keep exported OTLP log records of spans and join their message content to the spans.

- **Kept by span.** A record that carries a GenAI content event (see ``logs``) and the
  trace and span id of its span is stored (``SpanLog``), whether or not the span has
  arrived. A record sent again (an exporter's retry) is stored once.
- **Joined in either order.** When its span is stored, the span's missing input or
  output is rebuilt from all of its records and its run recomputed, in the same
  transaction, with the run's row locked as span exports lock it; its revision is
  bumped, so scores computed before the content arrived are stale. When the span comes
  later, span ingestion joins the stored records as it maps the span
  (``spans_join_logs``). When both arrive at once, span and log exports of the same
  runs take the same locks first (``locks``), so the later one sees what the other wrote.
- **Rejected records**: one without a span (no trace or span id), one whose ids cannot
  be read, and one that is not a GenAI content event (an application's own log lines)
  are counted as rejected with the reason; nothing else about them is kept.
- **Overload**: a database that does not answer in time is ``Overloaded`` (503), as
  for spans; the export is rolled back whole.
"""

import hashlib
from dataclasses import dataclass, field

import orjson
from django.db import OperationalError, transaction
from django.db.models import F

from datasets.models import Span, SpanLog, Trace, TraceSource
from datasets.otlp.errors import Overloaded
from datasets.otlp.locks import traces_lock
from datasets.otlp.logs import CONTENT_EVENTS, content_with_logs, log_event, log_event_name
from datasets.otlp.runs import runs_recompute

RETRY_AFTER_SECONDS = 1
_CHUNK = 500


@dataclass
class LogsOutcome:
    accepted: int = 0
    rejected: int = 0
    problems: list = field(default_factory=list)


def otlp_logs_ingest(*, project, logs):
    """Store the span log records of ``logs`` (decoded ``OtlpLog``s) and join them to stored spans.

    Atomic and idempotent: the same export twice stores and changes nothing the second
    time. Returns a ``LogsOutcome``; raises ``Overloaded`` (503), writing nothing.
    """
    outcome = LogsOutcome()
    rows = _kept_rows(project, logs, outcome)
    if not rows:
        return outcome
    try:
        with transaction.atomic():
            traces_lock(project, {r.trace_id for r in rows})
            SpanLog.objects.bulk_create(rows, ignore_conflicts=True, batch_size=_CHUNK)
            outcome.problems += _stored_spans_join(project, {(r.trace_id, r.span_id) for r in rows})
    except OperationalError as exc:
        raise Overloaded(
            f"The database could not take this export now ({exc.__class__.__name__}); retry.",
            retry_after=RETRY_AFTER_SECONDS,
        ) from exc
    return outcome


def _kept_rows(project, logs, outcome):
    rows, other = [], 0
    for log in logs:
        problem = log.id_problem or _ids_problem(log)
        if problem:
            outcome.rejected += 1
            outcome.problems.append(f"{log.where}: {problem}")
            continue
        name = log_event_name(log.event_name, log.attributes)
        if name not in CONTENT_EVENTS:
            other += 1
            continue
        outcome.accepted += 1
        trace_id, span_id = log.trace_id.hex(), log.span_id.hex()
        attributes = {k: v for k, v in log.attributes.items() if k != "event.name"}
        digest = hashlib.sha256(
            orjson.dumps(
                [trace_id, span_id, name, log.time_unix_nano, attributes, log.body], option=orjson.OPT_SORT_KEYS
            )
        ).hexdigest()
        rows.append(
            SpanLog(
                project=project,
                trace_id=trace_id,
                span_id=span_id,
                name=name[:200],
                time_unix_nano=log.time_unix_nano,
                attributes=attributes,
                body=log.body,
                digest=digest,
            )  # fmt: skip
        )
    if other:
        outcome.rejected += other
        outcome.problems.append(
            f"{other} log record(s) are not GenAI content events (gen_ai.user.message, gen_ai.choice, "
            "gen_ai.client.inference.operation.details...) and were not kept"
        )
    return rows


def _ids_problem(log):
    if len(log.trace_id) != 16 or not any(log.trace_id) or len(log.span_id) != 8 or not any(log.span_id):
        return "the record names no span (a traceId of 16 bytes and a spanId of 8 are needed to join it to its span)"
    return None


def span_events(project, trace_ids):
    """``{(trace_id, span_id): [OtlpEvent]}``: the stored log records of these runs, as span events."""
    events = {}
    for chunk in _chunks(sorted(trace_ids)):
        rows = SpanLog.objects.filter(project=project, trace_id__in=chunk).values_list(
            "trace_id", "span_id", "name", "time_unix_nano", "attributes", "body"
        )
        for trace_id, span_id, name, time, attributes, body in rows:
            events.setdefault((trace_id, span_id), []).append(log_event(name, time, attributes, body))
    return events


def spans_join_logs(project, by_trace):
    """Fill the mapped spans of ``{trace_id: {span_id: MappedSpan}}`` from their stored log records."""
    events = span_events(project, by_trace)
    for (trace_id, span_id), found in events.items():
        span = by_trace.get(trace_id, {}).get(span_id)
        if span is not None:
            span.input, span.output, span.attributes = content_with_logs(
                kind=span.kind, input_value=span.input, output_value=span.output,
                attributes=span.attributes, events=found,
            )  # fmt: skip


def _stored_spans_join(project, keys):
    """Rebuild the content of stored spans named by ``keys`` and recompute their runs; returns warnings."""
    trace_ids = sorted({t for t, _ in keys})
    traces = list(
        Trace.objects.select_for_update()
        .filter(project=project, trace_id__in=trace_ids, source=TraceSource.OTLP)
        .order_by("pk")
    )
    if not traces:
        return []
    by_pk = {t.pk: t for t in traces}
    events = span_events(project, [t.trace_id for t in traces])
    touched = {}
    spans = Span.objects.filter(trace__in=traces, span_id__in=sorted({s for _, s in keys}))
    for span in spans:
        key = (by_pk[span.trace_id].trace_id, span.span_id)
        if key not in keys:
            continue
        joined = content_with_logs(
            kind=span.kind, input_value=span.input, output_value=span.output,
            attributes=span.attributes, events=events.get(key, []),
        )  # fmt: skip
        if joined != (span.input, span.output, span.attributes):
            span.input, span.output, span.attributes = joined
            span.save(update_fields=["input", "output", "attributes"])
            touched[span.trace_id] = by_pk[span.trace_id]
    if not touched:
        return []
    warnings = runs_recompute(project=project, traces=list(touched.values()))
    Trace.objects.filter(pk__in=list(touched)).update(revision=F("revision") + 1)
    return warnings


def _chunks(items):
    items = list(items)
    return (items[i : i + _CHUNK] for i in range(0, len(items), _CHUNK))
