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
    io = "input, output" if content else "NULL, NULL"
    traces = {
        row[0]: row
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
    cases = _cases(row[9] for row in traces.values() if row[9] is not None)
    return [_loaded(traces[pk], spans.get(pk, ()), cases.get(traces[pk][9])) for pk in trace_pks if pk in traces]


def _spans(trace_pks):
    """``{trace pk: [SpanView]}`` in execution order: start time (spans without one last), then the client's order."""
    q = connection.ops.quote_name
    rows = rows_select_by_ids(
        f"SELECT trace_id, span_id, parent_span_id, kind, name, input, output, status, error, latency_ms, "
        f"cost_cents, position, started_at FROM {q(Span._meta.db_table)} WHERE trace_id {{ids}}",
        trace_pks,
    )
    rows.sort(key=lambda r: (r[0], r[12] is None, r[12] or 0, r[11]))
    spans = {}
    for row in rows:
        spans.setdefault(row[0], []).append(
            SpanView(
                span_id=row[1],
                parent_id=row[2],
                kind=row[3],
                name=row[4],
                input=_json(row[5]),
                output=_json(row[6]),
                status=row[7],
                error=row[8],
                latency_ms=row[9],
                cost_cents=None if row[10] is None else float(row[10]),
                position=row[11],
            )
        )
    return spans


def tool_names(trace_pks):
    """``{trace pk: [tool names]}`` in execution order, reading only the tool spans' names."""
    q = connection.ops.quote_name
    rows = rows_select_by_ids(
        f"SELECT trace_id, name, position, started_at FROM {q(Span._meta.db_table)} "
        f"WHERE kind = 'tool' AND trace_id {{ids}}",
        list(trace_pks),
    )
    rows.sort(key=lambda r: (r[0], r[3] is None, r[3] or 0, r[2]))
    names = {}
    for row in rows:
        names.setdefault(row[0], []).append(row[1])
    return names


def _tool_call(name, position):
    return SpanView(
        span_id="", parent_id=None, kind="tool", name=name, input=None, output=None, status="ok", error=None,
        latency_ms=None, cost_cents=None, position=position,
    )  # fmt: skip


def _loaded(row, spans, case):
    return LoadedRun(
        pk=row[0],
        view=RunView(
            trace_id=row[1],
            input=_json(row[2]),
            output=_json(row[3]),
            status=row[4],
            error=row[5],
            latency_ms=row[6],
            cost_cents=None if row[7] is None else float(row[7]),
            spans=tuple(spans),
            expected_output=case[0] if case else None,
            expectations=case[1] if case else {},
            has_case=case is not None,
            unpriced_models=_unpriced(_json(row[11])),
        ),
        experiment_id=row[8],
        case_id=row[9] if case else None,
        revision=row[10],
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
        f"SELECT id, CAST(expected_output AS text), CAST(expectations AS text) "
        f"FROM {connection.ops.quote_name(GoldenCase._meta.db_table)} WHERE id {{ids}}",
        wanted,
    )
    cases = {}
    for pk, expected_text, expectations_text in rows:
        expected, expectations = json_loads(expected_text), json_loads(expectations_text)
        expectations = expectations if isinstance(expectations, dict) else {}
        cases[pk] = (expected, expectations, orjson.dumps([expected, expectations], option=orjson.OPT_SORT_KEYS))
    return cases


def _json(value):
    # JSON columns come back as text from both backends (Django's PostgreSQL backend
    # does not let psycopg parse jsonb); SQL NULL is None.
    if value is None:
        return None
    if isinstance(value, str | bytes):
        return orjson.loads(value)
    return value
