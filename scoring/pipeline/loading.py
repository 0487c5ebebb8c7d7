"""Load stored runs in bulk as the ``RunView``s scorers read.

Three queries per batch whatever its size (runs, their spans, their cases), with the
column values decoded by hand: going through model instances costs several times more
than the scorers themselves on a large pass. Spans are in execution order (start time,
spans without one last, then the order the client listed them); ``revision`` lets
the writer notice a run that changed after it was loaded. A run linked to a case
carries the case's ``expected_output`` and ``expectations`` and ``has_case=True``.
"""

from dataclasses import dataclass

import orjson
from django.db import connection

from checks.scorers import RunView, SpanView
from datasets.models import Experiment, GoldenCase, Span, Trace
from evalsite.bulk import json_loads, rows_select_by_ids


@dataclass(slots=True)
class LoadedRun:
    """A run as a pass handles it: the view scorers read, and what a score copies from it."""

    pk: int
    view: RunView
    experiment_id: int | None
    case_id: int | None
    # The run's revision when it was loaded: ingestion bumps it when the run changes.
    revision: int
    # The linked case's expected answer and expectations as canonical JSON (None without
    # a case): cases with the same content configure scorers the same way.
    case_key: bytes | None = None

    @property
    def trace_id(self):
        return self.view.trace_id


def runs_load(trace_pks, *, spans=True, content=True):
    """The runs with these primary keys, in the order given; runs deleted meanwhile are left out.

    ``spans`` says how much of their spans to read (``checks.scorers.READS``, or a bool):
    ``True``/``"spans"`` all of them, whole; ``"tool_names"`` only the tool calls' names,
    in order (each a ``SpanView`` of kind ``tool`` with nothing else: what
    ``run.tool_names()`` reads); ``False``/``"nothing"`` none (``view.spans`` is empty),
    enough to resolve scorers' config and find the scores already stored. Spans are most
    of what a run holds: a pass loads only what its scorers read (``ScoringPlan.reads``).
    ``content=False`` leaves out their input and output too (None): a scorer's config
    depends only on the request and the linked case (``scoring.pipeline.engine.ScoringPlan``).
    """
    if not trace_pks:
        return []
    q = connection.ops.quote_name
    io = "input, output" if content else "NULL AS input, NULL AS output"
    traces = {
        row.id: row
        for row in rows_select_by_ids(
            f"SELECT id, trace_id, {io}, status, error, latency_ms, cost_cents, experiment_id, case_id, "
            f"revision, cost_detail FROM {q(Trace._meta.db_table)} WHERE id {{ids}}",
            trace_pks,
        )
    }
    if spans == "tool_names":
        spans = {pk: [_tool_call(name, n) for n, name in enumerate(names)] for pk, names in tool_names(traces).items()}
    else:
        spans = _spans(list(traces)) if spans and spans != "nothing" else {}
    cases = _cases(row.case_id for row in traces.values() if row.case_id is not None)
    return [_loaded(traces[pk], spans.get(pk, ()), cases.get(traces[pk].case_id)) for pk in trace_pks if pk in traces]


def _spans(trace_pks):
    """``{trace pk: [SpanView]}`` in execution order: start time (spans without one last), then the client's order."""
    q = connection.ops.quote_name
    rows, c = rows_select_by_ids(
        f"SELECT trace_id, span_id, parent_span_id, kind, name, input, output, status, error, latency_ms, "
        f"cost_cents, position, started_at FROM {q(Span._meta.db_table)} WHERE trace_id {{ids}}",
        trace_pks,
        positions=True,
    )
    spans = {}
    if not rows:
        return spans
    # Many rows: the driver's tuples, each column read at its position, taken by name once.
    trace, span_id, parent, kind, name = c.trace_id, c.span_id, c.parent_span_id, c.kind, c.name
    inp, out, status, error, latency, cost, position, started = (
        c.input, c.output, c.status, c.error, c.latency_ms, c.cost_cents, c.position, c.started_at,
    )  # fmt: skip
    rows.sort(key=lambda r: (r[trace], r[started] is None, r[started] or 0, r[position]))
    for row in rows:
        spans.setdefault(row[trace], []).append(
            SpanView(
                span_id=row[span_id],
                parent_id=row[parent],
                kind=row[kind],
                name=row[name],
                input=_json(row[inp]),
                output=_json(row[out]),
                status=row[status],
                error=row[error],
                latency_ms=row[latency],
                cost_cents=None if row[cost] is None else float(row[cost]),
                position=row[position],
            )
        )
    return spans


def tool_names(trace_pks):
    """``{trace pk: [tool names]}`` in execution order, reading only the tool spans' names."""
    q = connection.ops.quote_name
    rows, c = rows_select_by_ids(
        f"SELECT trace_id, name, position, started_at FROM {q(Span._meta.db_table)} "
        f"WHERE kind = 'tool' AND trace_id {{ids}}",
        list(trace_pks),
        positions=True,
    )
    names = {}
    if not rows:
        return names
    trace, name, position, started = c.trace_id, c.name, c.position, c.started_at
    rows.sort(key=lambda r: (r[trace], r[started] is None, r[started] or 0, r[position]))
    for row in rows:
        names.setdefault(row[trace], []).append(row[name])
    return names


def _tool_call(name, position):
    return SpanView(
        span_id="", parent_id=None, kind="tool", name=name, input=None, output=None, status="ok", error=None,
        latency_ms=None, cost_cents=None, position=position,
    )  # fmt: skip


def _loaded(row, spans, case):
    return LoadedRun(
        pk=row.id,
        view=RunView(
            trace_id=row.trace_id,
            input=_json(row.input),
            output=_json(row.output),
            status=row.status,
            error=row.error,
            latency_ms=row.latency_ms,
            cost_cents=None if row.cost_cents is None else float(row.cost_cents),
            spans=tuple(spans),
            expected_output=case[0] if case else None,
            expectations=case[1] if case else {},
            has_case=case is not None,
            unpriced_models=_unpriced(_json(row.cost_detail)),
        ),
        experiment_id=row.experiment_id,
        case_id=row.case_id if case else None,
        revision=row.revision,
        case_key=case[2] if case else None,
    )


def _unpriced(cost_detail):
    models = cost_detail.get("unknown_price") if isinstance(cost_detail, dict) else None
    return tuple(str(m) for m in models) if isinstance(models, list) else ()


def experiment_names(runs):
    """``{experiment id: name}`` of the experiments of ``runs`` (one query)."""
    ids = {run.experiment_id for run in runs if run.experiment_id}
    return dict(Experiment.objects.filter(pk__in=ids).values_list("pk", "name")) if ids else {}


def _cases(case_pks):
    wanted = sorted(set(case_pks))
    if not wanted:
        return {}
    # By id, as the runs: an IN list of hundreds of parameters costs more to send than to answer.
    rows = rows_select_by_ids(
        f"SELECT id, CAST(expected_output AS text) AS expected, CAST(expectations AS text) AS expectations "
        f"FROM {connection.ops.quote_name(GoldenCase._meta.db_table)} WHERE id {{ids}}",
        wanted,
    )
    cases = {}
    for row in rows:
        expected, expectations = json_loads(row.expected), json_loads(row.expectations)
        expectations = expectations if isinstance(expectations, dict) else {}
        cases[row.id] = (expected, expectations, orjson.dumps([expected, expectations], option=orjson.OPT_SORT_KEYS))
    return cases


def _json(value):
    # JSON columns come back as text from both backends (Django's PostgreSQL backend
    # does not let psycopg parse jsonb); SQL NULL is None.
    if value is None:
        return None
    if isinstance(value, str | bytes):
        return orjson.loads(value)
    return value
