"""The regression gate as a Python API, in the seed's words, answered by the server.

``run_regression_gate(case_set, agent, overrides)`` runs the user's agent on every
golden case with a tracer, uploads the runs as one experiment, asks the server's gate
and returns a ``GateReport`` of ``CaseResult``s: the seed's fields (``name, passed,
actual_tools, tool_choice_ok, schema_errors, output_errors, cost_cents, cost_ok,
latency_ms, latency_ok``) plus what the server adds (``measured``, ``failed_checks``,
``reasons``, ``checks``, ``trace_id``, ``run_url``). ``report.print()`` gives the seed's
lines, ``GATE: FAIL (4/5)`` and one line per case.

The agent is a callable ``agent(case, run)`` that answers ``case`` (a dict with at
least ``name`` and ``input``, as ``fetch_cases`` returns it) and records its steps in
``run`` (a tracing ``Run``: ``run.span(...)``, ``run.add_span(...)``); it returns the
final answer or sets ``run.output``. ``overrides`` is ``{case_name: replacement}``,
exactly as in the seed: for a named case the agent is called ``agent(case, run,
replacement)`` (for Reservo the replacement is a model script), every other case runs
as it is. An exception escaping the agent is recorded in that case's run (status
``error``) and the gate goes on: one broken case fails the batch, it does not stop it.

The verdict is the server's (floor, baseline, policy), never recomputed here: a
``GateReport`` only says what the server's gate said, and a FAIL is a verdict of form.
"""

from __future__ import annotations

import dataclasses
import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .calls import request_gate, upload_runs
from .http import DEFAULT_MAX_WAIT, DEFAULT_TIMEOUT, Client, client_for
from .lines import case_line, gate_counts
from .tracing import Tracer

Agent = Callable[..., Any]


@dataclass
class CaseResult:
    """The verdict of FORM of one case, as the server's gate gave it (the seed's fields first)."""

    name: str
    passed: bool
    actual_tools: list = field(default_factory=list)
    tool_choice_ok: bool = True
    schema_errors: list = field(default_factory=list)
    output_errors: list = field(default_factory=list)
    cost_cents: Any = 0
    cost_ok: bool = True
    latency_ms: Any = 0
    latency_ok: bool = True
    measured: bool = True
    failed_checks: list = field(default_factory=list)
    reasons: list = field(default_factory=list)
    checks: list = field(default_factory=list, repr=False)
    trace_id: Any = None
    run_url: Any = None

    @classmethod
    def from_gate(cls, case: dict) -> CaseResult:
        """A case of the gate's answer (docs/gate.md) as a CaseResult."""
        names = {f.name for f in dataclasses.fields(cls)}
        values = {k: v for k, v in case.items() if k in names}
        values["passed"] = case.get("passed") is True
        values.setdefault("actual_tools", [])
        return cls(**values)

    def line(self) -> str:
        """The seed's line: ``  name PASS``, or ``FAIL  -- `` and the evidence of what failed."""
        return case_line(dataclasses.asdict(self))


@dataclass
class GateReport:
    """The verdict of the whole set: ``passed`` is the server's PASS, ``cases`` each case's result."""

    cases: list = field(default_factory=list)
    passed: bool = True
    verdict: str = "PASS"
    pass_rate: Any = None
    floor: Any = None
    delta: Any = None
    blocked_by: list = field(default_factory=list)
    gate_run_id: Any = None
    url: Any = None
    answer: dict = field(default_factory=dict, repr=False)

    @classmethod
    def from_gate(cls, answer: dict, order: list | None = None) -> GateReport:
        """The gate's answer as a report; ``order`` (case names) puts those cases first, as run."""
        cases = [CaseResult.from_gate(c) for c in answer.get("cases") or []]
        if order:
            rank = {name: i for i, name in enumerate(order)}
            cases.sort(key=lambda c: rank.get(c.name, len(rank)))
        return cls(
            cases=cases,
            passed=answer.get("verdict") == "PASS",
            verdict=str(answer.get("verdict")),
            pass_rate=answer.get("pass_rate"),
            floor=answer.get("floor"),
            delta=answer.get("delta"),
            blocked_by=list(answer.get("blocked_by") or []),
            gate_run_id=answer.get("gate_run_id"),
            url=answer.get("url"),
            answer=answer,
        )

    def lines(self) -> list:
        """``GATE: PASS (5/5)`` and one line per case: the seed's 1 + N lines."""
        passed, total = (
            gate_counts(self.answer) if self.answer else (sum(c.passed for c in self.cases), len(self.cases))
        )
        return [f"GATE: {'PASS' if self.passed else 'FAIL'} ({passed}/{total})"] + [c.line() for c in self.cases]

    def print(self, file=None) -> None:
        print("\n".join(self.lines()), file=file or sys.stdout)

    def __str__(self) -> str:
        return "\n".join(self.lines())

    def case(self, name: str) -> CaseResult:
        """The result of the case called ``name`` (KeyError if the gate did not evaluate it)."""
        for case in self.cases:
            if case.name == name:
                return case
        raise KeyError(name)

    def summarize_failures(self) -> dict:
        """``{case: [categories]}`` for each failed case, as the seed's exercise classifies them."""
        return summarize_failures(self)


def summarize_failures(report: GateReport) -> dict:
    """Which of the seed's four categories each failed case fell in: tool_choice, schema, output, threshold.

    From the seed's fields alone, as in the seed: a case may be in several; a case whose
    failure none of them explains (no run, an error span, a judge criterion) maps to
    ``[]`` here, and its ``failed_checks`` and ``reasons`` say why.
    """
    summary = {}
    for c in report.cases:
        if c.passed:
            continue
        reasons = []
        if not c.tool_choice_ok:
            reasons.append("tool_choice")
        if c.schema_errors:
            reasons.append("schema")
        if c.output_errors:
            reasons.append("output")
        if not c.cost_ok or not c.latency_ok:
            reasons.append("threshold")
        summary[c.name] = reasons
    return summary


def assert_case(case) -> None:
    """Fail a test (AssertionError) unless ``case`` passed; the message is its evidence and reasons.

    ``case`` is a CaseResult, or a case of the gate's answer (a dict).
    """
    result = case if isinstance(case, CaseResult) else CaseResult.from_gate(case)
    if result.passed:
        return
    lines = [result.line().strip()]
    lines += [f"  {reason}" for reason in result.reasons]
    if result.run_url:
        lines.append(f"  run: {result.run_url}")
    raise AssertionError("\n".join(lines))


def case_record(tracer: Tracer, case: dict, agent: Agent, replacement=None, *, trace_id: str, **fields):
    """Run ``agent`` on ``case`` inside a run of ``tracer``; returns the recorded payload.

    An exception escaping the agent is kept in the run (status ``error``), not raised.
    """
    try:
        with tracer.run(trace_id, input=case.get("input"), case=case["name"], **fields) as run:
            answer = agent(case, run) if replacement is None else agent(case, run, replacement)
            if answer is not None and run.output is None:
                run.output = answer
    except Exception:
        pass
    return tracer.runs[-1]


def _client(client, url, key, timeout, max_wait) -> Client:
    return client if client is not None else client_for(url, key, timeout=timeout, max_wait=max_wait)


def run_case(
    case: dict,
    agent: Agent,
    replacement=None,
    *,
    dataset: str,
    experiment: str,
    sequence_number: int | None = None,
    client: Client | None = None,
    url: str | None = None,
    key: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    max_wait: float = DEFAULT_MAX_WAIT,
) -> CaseResult:
    """Run ONE case: the agent (with ``replacement`` if given), upload its run, ask the gate.

    Returns this case's CaseResult from the server's gate of ``experiment``. The gate
    evaluates every active case of the dataset, so give run_case an experiment of its
    own: in that gate run the cases not run show "no run recorded for this case".
    """
    client = _client(client, url, key, timeout, max_wait)
    tracer = Tracer(experiment=experiment, dataset=dataset)
    number = f"-{sequence_number}" if sequence_number is not None else ""
    case_record(
        tracer, case, agent, replacement, trace_id=f"{experiment}-{case['name']}{number}-{uuid.uuid4().hex[:8]}"
    )
    upload_runs(client, tracer.runs, experiment=experiment)
    report = GateReport.from_gate(request_gate(client, dataset=dataset, experiment=experiment))
    return report.case(case["name"])


def run_regression_gate(
    case_set: list,
    agent: Agent,
    overrides: dict | None = None,
    *,
    dataset: str,
    experiment: str,
    baseline: str | None = None,
    set_baseline: bool = False,
    trials: int = 1,
    trial_overrides: dict | None = None,
    client: Client | None = None,
    url: str | None = None,
    key: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    max_wait: float = DEFAULT_MAX_WAIT,
) -> GateReport:
    """The gate: run every case of ``case_set``, upload the runs as ``experiment``, return the verdict.

    ``overrides`` (``{case_name: replacement}``) applies to the named case only; every
    other case runs as it is. Each case runs ``trials`` times, numbered 1..trials;
    ``trial_overrides`` (``{case_name: {trial: replacement}}``) replaces a case on the
    named trials only. Each call records new runs (trace ids carry a random suffix)
    with the same trial numbers, so calling again for the same experiment supersedes
    the earlier runs (the gate counts a trial's latest run). ``url`` and ``key`` default
    to ``EVALSITE_URL`` and ``EVALSITE_API_KEY``. Raises EvalgateError when no verdict
    could be had.
    """
    overrides, trial_overrides = overrides or {}, trial_overrides or {}
    client = _client(client, url, key, timeout, max_wait)
    tracer = Tracer(experiment=experiment, dataset=dataset)
    nonce = uuid.uuid4().hex[:8]
    for number, case in enumerate(case_set, start=1):
        for trial in range(1, trials + 1):
            replacement = trial_overrides.get(case["name"], {}).get(trial, overrides.get(case["name"]))
            suffix = f"-t{trial}" if trials > 1 else ""
            trace_id = f"{experiment}-{case['name']}{suffix}-{nonce}"
            metadata = {"sequence_number": number}
            case_record(tracer, case, agent, replacement, trace_id=trace_id, trial=trial, metadata=metadata)
    upload_runs(client, tracer.runs, experiment=experiment)
    answer = request_gate(client, dataset=dataset, experiment=experiment, baseline=baseline, set_baseline=set_baseline)
    return GateReport.from_gate(answer, order=[case["name"] for case in case_set])
