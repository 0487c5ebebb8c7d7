"""What a scorer reads, what it returns, and how it is run.

A scorer is a pure function ``func(run, config) -> Result | Abstain`` of an
already-loaded run (``RunView``) and its resolved config: no database, no network, no
clock, so it gives the same answer twice. ``score_run`` is the only way the rest of the
system calls one: it turns a crash inside a scorer into an ``Abstain("scorer_error")``,
so one bad scorer or one odd run never kills a scoring pass.

- ``Result``: a measured outcome, ``value`` in 0..1 (pass/fail scorers give 1.0/0.0),
  ``passed``, a one-line ``reason`` and the evidence in ``detail``.
- ``Abstain``: the scorer could not measure this run; ``reason`` is a short snake_case
  code and ``detail`` always has a ``message``. An abstention is never a zero.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

SPAN_KINDS = ("llm", "tool", "retrieval", "agent", "other")


# Views, results and abstentions are values nobody changes (scorers are pure functions),
# yet not frozen: a frozen dataclass sets each field through object.__setattr__, which
# made one eight times dearer to build (a pass builds a view per run and per span, and a
# result per check).
@dataclass(slots=True)
class SpanView:
    span_id: str
    parent_id: str | None
    kind: str  # llm | tool | retrieval | agent | other
    name: str
    input: object
    output: object
    status: str  # ok | error
    error: str | None
    latency_ms: int | None
    cost_cents: float | None
    position: int

    @property
    def failed(self):
        """A span failed when its status is ``error`` or it carries a non-blank error."""
        return self.status == "error" or bool(self.error and self.error.strip())


@dataclass(slots=True)
class RunView:
    trace_id: str
    input: object
    output: object
    status: str
    error: str | None
    latency_ms: int | None
    cost_cents: float | None
    spans: tuple[SpanView, ...]  # in execution order (start time, then position)
    expected_output: object = None  # the linked case's expected answer; None = none
    expectations: dict = field(default_factory=dict)  # the linked case's expectations ({} when no case)
    has_case: bool = False
    unpriced_models: tuple = ()  # models the run called whose price is unknown (its cost is then None)

    def tool_calls(self):
        """The run's tool calls (spans of kind ``tool``), in execution order."""
        return tuple(span for span in self.spans if span.kind == "tool")

    def tool_names(self):
        return [span.name for span in self.spans if span.kind == "tool"]


@dataclass(slots=True)
class Result:
    value: float
    passed: bool
    reason: str
    detail: dict

    @classmethod
    def verdict(cls, passed, reason, detail):
        """A pass/fail result: value 1.0 when passed, else 0.0."""
        return cls(1.0 if passed else 0.0, bool(passed), reason, detail)


@dataclass(slots=True)
class Abstain:
    reason: str
    detail: dict


@dataclass(frozen=True)
class Scorer:
    """A scorer's spec, as the registry holds it and ``GET /v1/api/scorers`` lists it.

    ``category`` and ``gated_by`` say how the gate reports and turns on the check.
    ``case_config(run)`` builds the scorer's config from the linked case
    (``run.expectations`` / ``run.expected_output``), or returns None when the case does
    not configure it. ``schema_keys`` names config keys whose value is itself a JSON
    Schema (checked by ``config_validate``). ``missing_reason`` / ``missing_message`` make
    the abstention when the scorer needs config and has none.
    """

    id: str
    description: str
    version: str
    kind: Literal["builtin", "agent_check", "judge"]
    needs_config: bool
    config_schema: dict
    expectation_keys: tuple
    func: Callable[[RunView, dict], "Result | Abstain"]
    case_config: Callable[[RunView], dict | None] | None = None
    schema_keys: tuple = ()
    missing_reason: str = "not_configured"
    missing_message: str = ""
    # The config every score of this scorer is stored with, whatever the request or the
    # case says (a judge criterion: its question).
    fixed_config: dict | None = None
    # What a failed or unmeasured check of this scorer is reported as in the gate:
    # tool_choice, tool_args, schema, output, threshold, error; judge criteria are "judge".
    category: str = "judge"
    # Checks a request config must pass beyond its JSON Schema (a pattern RE2 refuses):
    # ``config_problems(config) -> ["<scorer>.<field>: <message>"]``.
    config_problems: Callable[[dict], list] | None = None
    # The expectation that turns this check on for a case in the gate (None: only when a
    # case or the policy names the scorer). The gate reports checks in the order of the
    # expectations schema (``checks.expectations``).
    gated_by: str | None = None
    # What of a run's spans the scorer reads, so a pass loads no more (``READS``):
    # "nothing" (the answer, figures and case only), "tool_names" (the names of its tool
    # calls, in order: ``run.tool_names()``), or "spans" (every span, whole).
    reads: str = "spans"


# The span levels a scorer may read, least first.
READS = ("nothing", "tool_names", "spans")


def config_missing_abstain(scorer):
    """The abstention for a scorer that needs config and got none from the request or the case."""
    message = scorer.missing_message
    if not message:
        sources = " or ".join(f"expectation {key}" for key in scorer.expectation_keys)
        message = f"{scorer.id} is not configured: give config.{scorer.id}" + (
            f" or the case's {sources}" if sources else ""
        )
    return Abstain(scorer.missing_reason, {"message": message, "scorer": scorer.id})


def score_run(scorer, run, config):
    """Run ``scorer`` on ``run`` with its resolved ``config``; never raises.

    A ``None`` config for a scorer that needs one gives the ``not_configured`` (or the
    scorer's own) abstention. Any exception inside the scorer becomes
    ``Abstain("scorer_error", {"message", "exception"})``.
    """
    if config is None:
        if scorer.needs_config:
            return config_missing_abstain(scorer)
        config = {}
    try:
        outcome = scorer.func(run, config)
    except Exception as exc:  # a scorer crash is recorded, never allowed to kill the pass
        return Abstain(
            "scorer_error",
            {"message": f"{scorer.id} raised {type(exc).__name__}: {exc}"[:1000], "exception": type(exc).__name__},
        )
    if type(outcome) is not Result and not isinstance(outcome, Result | Abstain):
        return Abstain(
            "scorer_error",
            {"message": f"{scorer.id} returned {type(outcome).__name__}", "exception": "TypeError"},
        )
    return outcome


def span_from_payload(payload, position):
    """A ``SpanView`` from one span of the ``POST /v1/api/traces`` payload."""
    return SpanView(
        span_id=str(payload.get("span_id", position)),
        parent_id=payload.get("parent_id"),
        kind=payload.get("kind", "other"),
        name=payload.get("name", ""),
        input=payload.get("input"),
        output=payload.get("output"),
        status=payload.get("status", "ok"),
        error=payload.get("error"),
        latency_ms=payload.get("latency_ms"),
        cost_cents=payload.get("cost_cents"),
        position=position,
    )


def run_from_payload(payload, *, expected_output=None, expectations=None, has_case=None):
    """A ``RunView`` from a run in the ``POST /v1/api/traces`` payload shape.

    Spans are taken in the order listed (the payload lists them in execution order).
    ``has_case`` defaults to True when ``expectations`` or ``expected_output`` is given.
    """
    if has_case is None:
        has_case = expectations is not None or expected_output is not None
    return RunView(
        trace_id=str(payload.get("trace_id", "")),
        input=payload.get("input"),
        output=payload.get("output"),
        status=payload.get("status", "ok"),
        error=payload.get("error"),
        latency_ms=payload.get("latency_ms"),
        cost_cents=payload.get("cost_cents"),
        spans=tuple(span_from_payload(span, i) for i, span in enumerate(payload.get("spans", ()))),
        expected_output=expected_output,
        expectations=dict(expectations or {}),
        has_case=has_case,
    )
