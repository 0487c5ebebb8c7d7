"""``Tracer``: record an agent's runs as ``POST /v1/api/traces`` payloads (ARCHITECTURE section 9).

Runs and spans are context managers; explicit times win over measured ones, so a
scripted agent produces the same payload every time (re-uploading it is a no-op).
"""

from __future__ import annotations

import itertools
import time
import uuid
from datetime import datetime, timedelta
from typing import Any

from .calls import MAX_BATCH, upload_runs
from .files import jsonl_write
from .http import DEFAULT_MAX_WAIT, DEFAULT_TIMEOUT, UTC, client_for

SPAN_KINDS = ("llm", "tool", "retrieval", "agent", "other")


def _as_datetime(value: Any) -> datetime:
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, str):
        text = value[:-1] + "+00:00" if value.endswith(("Z", "z")) else value
        try:
            parsed = datetime.fromisoformat(text)
        except ValueError:
            raise ValueError(f"not an RFC 3339 timestamp: {value!r}") from None
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    raise TypeError(f"a timestamp must be a datetime or an RFC 3339 string, got {type(value).__name__}")


def rfc3339(value: Any) -> str:
    """UTC with a ``Z``; milliseconds only when there are some (``2026-11-30T10:00:00Z``)."""
    moment = _as_datetime(value).astimezone(UTC)
    millis = moment.microsecond // 1000
    return moment.strftime("%Y-%m-%dT%H:%M:%S") + (f".{millis:03d}" if millis else "") + "Z"


def _error_text(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class _Timed:
    """Start, end and latency, measured unless the caller set them.

    Explicit values win, so a scripted agent that sets ``started_at`` and
    ``latency_ms`` produces the same payload on every run. A missing end is the start
    plus the latency, which keeps the three consistent.
    """

    started_at: Any = None
    ended_at: Any = None
    latency_ms: Any = None
    _wall_start: datetime | None = None
    _perf_start = 0.0
    _measured_ms = 0.0

    def _clock_start(self) -> None:
        self._wall_start = datetime.now(UTC)
        self._perf_start = time.perf_counter()  # monotonic: a wall-clock jump cannot make latency negative

    def _clock_stop(self) -> None:
        self._measured_ms = (time.perf_counter() - self._perf_start) * 1000

    def _timing(self) -> dict:
        started = _as_datetime(self.started_at if self.started_at is not None else self._wall_start)
        if self.latency_ms is not None:
            latency = int(round(float(self.latency_ms)))  # the contract's latency_ms is an integer
        elif self.started_at is not None and self.ended_at is not None:
            latency = int(round((_as_datetime(self.ended_at) - started).total_seconds() * 1000))
        else:
            latency = int(round(self._measured_ms))
        ended = self.ended_at if self.ended_at is not None else started + timedelta(milliseconds=latency)
        return {"started_at": rfc3339(started), "ended_at": rfc3339(ended), "latency_ms": latency}


class Span(_Timed):
    """One step of a run (an LLM call, a tool call, ...). Use it as a context manager.

    Set ``output`` (and optionally ``cost_cents``, ``model``, ``usage``,
    ``attributes``, ``latency_ms``, ``started_at``) inside the block. An exception
    escaping the block marks the span ``status="error"`` with its text, and is re-raised.
    """

    def __init__(
        self,
        run: Run,
        kind: str,
        name: str,
        *,
        input: Any = None,
        parent: Any = ...,
        span_id: str | None = None,
        model: str | None = None,
        usage: dict | None = None,
        attributes: dict | None = None,
        cost_cents: Any = None,
        latency_ms: Any = None,
        started_at: Any = None,
        ended_at: Any = None,
    ):
        if kind not in SPAN_KINDS:
            raise ValueError(f"span kind must be one of {', '.join(SPAN_KINDS)}, got {kind!r}")
        self.run = run
        self.kind = kind
        self.name = name
        self.input = input
        self.output: Any = None
        self.status: str | None = None
        self.error: str | None = None
        self.span_id = span_id
        self.parent_id: str | None = None
        self._parent = parent
        self.model = model
        self.usage = usage
        self.attributes = dict(attributes or {})
        self.cost_cents = cost_cents
        self.latency_ms = latency_ms
        self.started_at = started_at
        self.ended_at = ended_at

    def span(self, kind: str, name: str, **fields) -> Span:
        """A child of this span, whatever else is open."""
        return self.run.span(kind, name, parent=self, **fields)

    def __enter__(self) -> Span:
        self.run._span_open(self)
        self._clock_start()
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        self._clock_stop()
        if exc is not None:
            self.status = "error"
            self.error = _error_text(exc)
        self.run._span_close(self)
        return False

    def payload(self) -> dict:
        body = {
            "span_id": self.span_id,
            "parent_id": self.parent_id,
            "kind": self.kind,
            "name": self.name,
            "input": self.input,
            "output": self.output,
            "status": self.status or ("error" if self.error else "ok"),
            "error": self.error,
            **self._timing(),
        }
        if self.cost_cents is not None:
            body["cost_cents"] = self.cost_cents
        if self.model is not None:
            body["model"] = self.model
        if self.usage is not None:
            body["usage"] = self.usage
        body["attributes"] = self.attributes
        return body


class Run(_Timed):
    """One agent run. Use it as a context manager; on exit its payload joins ``tracer.runs``.

    ``trial`` numbers the tries of one case in an experiment (1, 2, ...): a run sent again
    with the same trial supersedes the earlier one at the gate. Set ``output`` (the final
    answer) and optionally ``cost_cents``, ``metadata``,
    ``tags``, ``latency_ms``, ``started_at`` inside the block. An exception escaping it
    records the run with ``status="error"`` and its text (failed runs are the ones worth
    keeping), then is re-raised.
    """

    def __init__(
        self,
        tracer: Tracer,
        trace_id: str,
        *,
        name: str,
        input: Any = None,
        case: Any = None,
        trial: int | None = None,
        dataset: str | None = None,
        experiment: str | None = None,
        metadata: dict | None = None,
        tags: list | None = None,
        cost_cents: Any = None,
        latency_ms: Any = None,
        started_at: Any = None,
        ended_at: Any = None,
    ):
        self.tracer = tracer
        self.trace_id = trace_id
        self.name = name
        self.input = input
        self.case = case
        self.trial = trial
        self.dataset = dataset
        self.experiment = experiment
        self.metadata = dict(metadata or {})
        self.tags = list(tags or [])
        self.output: Any = None
        self.status: str | None = None
        self.error: str | None = None
        self.cost_cents = cost_cents
        self.latency_ms = latency_ms
        self.started_at = started_at
        self.ended_at = ended_at
        self.spans: list[Span] = []
        self._open: list[Span] = []
        self._ids = itertools.count(1)
        self._done = False

    def span(self, kind: str, name: str, **fields) -> Span:
        """A span; started by ``with``. Its parent is the innermost span open at that moment."""
        return Span(self, kind, name, **fields)

    def add_span(self, kind: str, name: str, *, output: Any = None, error: str | None = None, **fields) -> Span:
        """Record a step that already happened (a replayed tool call), with explicit figures."""
        with self.span(kind, name, **fields) as span:
            span.output = output
            if error is not None:
                span.status, span.error = "error", error
        return span

    def _span_open(self, span: Span) -> None:
        if span.span_id is None:
            # A counter rather than uuid4: a scripted run then has the same ids every
            # time, so uploading it again is a no-op instead of a 409.
            span.span_id = f"s{next(self._ids)}"
        parent = span._parent
        if parent is ...:
            span.parent_id = self._open[-1].span_id if self._open else None
        else:
            span.parent_id = parent.span_id if isinstance(parent, Span) else parent
        self._open.append(span)
        self.spans.append(span)

    def _span_close(self, span: Span) -> None:
        if span in self._open:
            self._open.remove(span)

    def __enter__(self) -> Run:
        if self._done:
            raise RuntimeError(f"run {self.trace_id!r} was already recorded")
        self._clock_start()
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        self._clock_stop()
        if exc is not None:
            self.status = "error"
            self.error = _error_text(exc)
        self._done = True
        self.tracer.runs.append(self.payload())
        return False

    def payload(self) -> dict:
        body: dict[str, Any] = {"trace_id": self.trace_id, "name": self.name}
        if self.experiment is not None:
            body["experiment"] = self.experiment
        if self.dataset is not None:
            body["dataset"] = self.dataset
        if self.case is not None:
            body["case"] = self.case
        if self.trial is not None:
            body["trial"] = self.trial
        body.update(
            {
                "input": self.input,
                "output": self.output,
                "status": self.status or ("error" if self.error else "ok"),
                "error": self.error,
                **self._timing(),
            }
        )
        if self.cost_cents is not None:
            body["cost_cents"] = self.cost_cents
        body.update({"metadata": self.metadata, "tags": self.tags, "spans": [s.payload() for s in self.spans]})
        return body


class Tracer:
    """Collects runs of an agent as ``POST /v1/api/traces`` payloads.

    ::

        tracer = Tracer(experiment="v2", dataset="reservo")
        with tracer.run("run-42", name="reservo", input=question, case="quote_focus_pro_3h") as run:
            with run.span("tool", "quote_room", input={"room": "Focus"}) as span:
                span.output = quote_room(...)
            run.output = answer
        tracer.upload()            # or tracer.write_jsonl("runs.jsonl")

    Spans nest by the order of ``with`` blocks in one thread; for steps running
    concurrently, pass ``parent=`` explicitly.
    """

    def __init__(
        self,
        experiment: str | None = None,
        dataset: str | None = None,
        *,
        name: str = "agent",
        metadata: dict | None = None,
        tags: list | None = None,
    ):
        self.experiment = experiment
        self.dataset = dataset
        self.name = name
        self.metadata = dict(metadata or {})
        self.tags = list(tags or [])
        self.runs: list[dict] = []

    def run(
        self,
        trace_id: str | None = None,
        *,
        name: str | None = None,
        input: Any = None,
        case: Any = None,
        dataset: str | None = None,
        metadata: dict | None = None,
        tags: list | None = None,
        **fields,
    ) -> Run:
        """A run; ``trace_id`` defaults to a random one (give a stable one to make re-uploads no-ops)."""
        return Run(
            self,
            trace_id or uuid.uuid4().hex,
            name=name or self.name,
            input=input,
            case=case,
            dataset=dataset or self.dataset,
            experiment=self.experiment,
            metadata={**self.metadata, **(metadata or {})},
            tags=[*self.tags, *(tags or [])],
            **fields,
        )

    def write_jsonl(self, path) -> None:
        """One run per line, UTF-8; ``path`` may also be an open text file."""
        if hasattr(path, "write"):
            jsonl_write(self.runs, path)
            return
        with open(path, "w", encoding="utf-8") as fh:
            jsonl_write(self.runs, fh)

    def upload(
        self,
        url: str | None = None,
        key: str | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        batch_size: int = MAX_BATCH,
        max_wait: float = DEFAULT_MAX_WAIT,
    ) -> dict:
        """POST the runs like ``evalgate upload``; returns ``{"runs", "created", "unchanged"}``.

        ``url`` and ``key`` default to ``EVALSITE_URL`` and ``EVALSITE_API_KEY``. Raises
        EvalgateError (ApiError for an error answer) when the upload fails.
        """
        client = client_for(url, key, timeout=timeout, max_wait=max_wait)
        return upload_runs(client, self.runs, experiment=self.experiment, batch_size=batch_size)
