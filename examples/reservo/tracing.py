"""Record a Reservo run with evalgate's tracing helper, exactly as it happened.

A run is one ``agent`` span (the loop) with, under it, an ``llm`` span per model turn
(tokens, cost, the turn's text and tool requests) and a ``tool`` span per tool call
(arguments, parsed result, error). Times are the agent's deterministic offsets from the
run's start, so the recorded latency and cost are the ones ``pricing.py`` computed.

``reservo_agent(case, run, script=None)`` is Reservo as ``evalgate.run_regression_gate``
calls an agent: it answers the case into an open run, and ``script`` (a replacement
model script, the seed's ``overrides``) replaces the case's own for that case only.
"""

from datetime import datetime, timedelta, timezone

from .agent import run_reservo_agent
from .tools import reset_state

MODEL_NAME = "reservo-scripted"


def reservo_agent(case, run, script=None, *, started_at=None):
    """Run Reservo on ``case`` (its own script unless ``script``) and record it into ``run``; returns the AgentRun."""
    reset_state()
    script = script if script is not None else case["metadata"]["model_script"]
    result = run_reservo_agent(case["input"], script)
    start = started_at or datetime.now(timezone.utc)  # noqa: UP017 - the client side stays 3.9-friendly

    def at(offset_ms):
        return start + timedelta(milliseconds=offset_ms)

    run.name, run.started_at, run.latency_ms, run.cost_cents = "reservo", start, result.latency_ms, result.cost_cents
    agent = run.add_span("agent", "reservo", started_at=start, latency_ms=result.latency_ms)
    for turn in result.turns:
        run.add_span(
            "llm", "model", parent=agent, input={"stop_reason": turn.stop_reason}, output=turn.content,
            model=MODEL_NAME, usage={"input_tokens": turn.input_tokens, "output_tokens": turn.output_tokens},
            cost_cents=turn.cost_cents, started_at=at(turn.start_offset_ms), latency_ms=turn.latency_ms,
        )  # fmt: skip
    for call in result.tool_calls:
        run.add_span(
            "tool", call.name, parent=agent, input=call.input, output=call.result,
            error=None if call.ok else call.error, started_at=at(call.start_offset_ms), latency_ms=call.latency_ms,
        )  # fmt: skip
    run.output = result.answer
    if result.status == "error":
        run.status, run.error = "error", result.error
    return result


def case_trace(tracer, case, *, script=None, trace_id, started_at=None):
    """Run ``case`` (its own script unless ``script`` overrides it) and record it in ``tracer``."""
    with tracer.run(trace_id, name="reservo", input=case["input"], case=case["name"]) as run:
        result = reservo_agent(case, run, script, started_at=started_at)
    return result
