"""Reservo's agent loop, driven by a scripted model.

``run_reservo_agent(question, model_script)`` plays a list of model turns in the
Anthropic messages shape, runs the tools they ask for against the booking state, and
returns an :class:`AgentRun`. A turn is::

    {"stop_reason": "tool_use", "content": [
        {"type": "tool_use", "id": "toolu_01", "name": "book_room", "input": {...}}]}
    {"stop_reason": "end_turn", "content": [{"type": "text", "text": "..."}]}

Rules of the loop:

- Turns are consumed in order. Content blocks are ``text`` or ``tool_use``.
- ``stop_reason`` ``tool_use`` or ``pause_turn``: every tool_use block of the turn runs,
  in order, and its result is fed back to the next turn. A continuing turn with no
  tool_use block (typically ``pause_turn`` with a short text) is a thinking turn: it
  costs a model turn of latency and its text tokens, and the loop goes on.
- ``end_turn``: the run ends ``ok``; the answer is the turn's text blocks joined by a
  newline. An ``end_turn`` turn that also asks for a tool is a malformed script.
- The run ends with ``status="error"`` (and ``answer=None``) when the script runs out
  before an ``end_turn``, a turn names a tool Reservo does not have (the call is recorded
  as failed, with 0 ms latency, and nothing after it runs), a turn stops for any other
  reason (``max_tokens``, ``refusal``...), or a turn is malformed.

A tool that refuses its input does not end the run: the call is recorded with
``ok=False``, ``error`` set and ``result={"error": "<message>"}``, and that object is fed
back to the model as a ``tool_result`` with ``is_error: true``, as the real API does.

Tool results reach the model as ``json.dumps(result)`` (``ToolCall.result_json``); the
parsed ``result`` is kept beside it. ``AgentRun.messages`` is the conversation as the
model saw it. Cost and latency follow ``pricing.py``. The loop never resets the booking
state: call ``reset_state()`` before each case, so booking ids start at ``BK-0001``.
"""

import copy
import json
from dataclasses import asdict, dataclass, field
from decimal import Decimal

from . import pricing, tools

CONTINUE_STOP_REASONS = ("tool_use", "pause_turn")
BLOCK_TYPES = ("text", "tool_use")


@dataclass
class ToolCall:
    """One tool call: what was asked, what came back, and when (offsets from the run's start)."""

    tool_use_id: str
    name: str
    input: dict
    result: object
    result_json: str
    ok: bool
    error: str | None
    turn: int
    start_offset_ms: int
    latency_ms: int


@dataclass
class ModelTurn:
    """One model turn as played from the script, with its tokens, cost and timing."""

    index: int
    stop_reason: str
    content: list
    text: str
    input_tokens: int
    output_tokens: int
    cost_cents: float
    start_offset_ms: int
    latency_ms: int


@dataclass
class AgentRun:
    """Everything one run of the agent did, in order."""

    question: str
    answer: str | None = None
    status: str = "ok"
    error: str | None = None
    turns: list[ModelTurn] = field(default_factory=list)
    tool_calls: list[ToolCall] = field(default_factory=list)
    messages: list[dict] = field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0
    cost_cents: float = 0.0
    latency_ms: int = 0

    @property
    def tools_called(self):
        """Names of the tools called, in order (what the tool_choice check compares)."""
        return [call.name for call in self.tool_calls]

    def last_call(self, name):
        """The last call of tool ``name``, or None if it was never called."""
        for call in reversed(self.tool_calls):
            if call.name == name:
                return call
        return None

    def last_result(self, name):
        """The parsed result of the last call of tool ``name``, or None if it was never called."""
        call = self.last_call(name)
        return None if call is None else call.result

    def to_dict(self):
        """A JSON-serialisable copy of the run."""
        data = asdict(self)
        data["tools_called"] = self.tools_called
        return data


def _turn_problem(turn):
    """Why ``turn`` is not a model turn this loop can play, or None."""
    if not isinstance(turn, dict):
        return "a turn must be an object"
    if not isinstance(turn.get("stop_reason"), str):
        return "stop_reason must be a string"
    content = turn.get("content")
    if not isinstance(content, list):
        return "content must be a list of blocks"
    for position, block in enumerate(content):
        if not isinstance(block, dict) or block.get("type") not in BLOCK_TYPES:
            return f"block {position} must be a text or tool_use block"
        if block["type"] == "text" and not isinstance(block.get("text"), str):
            return f"block {position}: text must be a string"
        if block["type"] == "tool_use" and not (
            isinstance(block.get("id"), str)
            and isinstance(block.get("name"), str)
            and isinstance(block.get("input"), dict)
        ):
            return f"block {position}: tool_use needs a string id, a string name and an input object"
    return None


def _text(content):
    return "\n".join(block["text"] for block in content if block["type"] == "text")


class _Run:
    """The loop's running totals; ``finish`` writes them onto the AgentRun."""

    def __init__(self, question, state):
        self.run = AgentRun(question=question, messages=[{"role": "user", "content": question}])
        self.state = state
        self.clock_ms = 0
        self.cost = Decimal(0)
        self.pending_input_tokens = pricing.count_tokens(question)

    def play_turn(self, index, turn):
        content = copy.deepcopy(turn["content"])
        input_tokens = self.pending_input_tokens
        output_tokens = pricing.output_tokens(content)
        cost = pricing.cost_decimal(input_tokens, output_tokens)
        self.run.turns.append(
            ModelTurn(
                index=index,
                stop_reason=turn["stop_reason"],
                content=content,
                text=_text(content),
                input_tokens=input_tokens,
                output_tokens=output_tokens,
                cost_cents=float(cost),
                start_offset_ms=self.clock_ms,
                latency_ms=pricing.MODEL_TURN_MS,
            )
        )
        self.run.messages.append({"role": "assistant", "content": copy.deepcopy(content)})
        self.run.input_tokens += input_tokens
        self.run.output_tokens += output_tokens
        self.cost += cost
        self.clock_ms += pricing.MODEL_TURN_MS
        self.pending_input_tokens = 0
        return content

    def call_tool(self, index, block):
        """Run one tool_use block; returns the tool_result block, or None for an unknown tool."""
        name = block["name"]
        arguments = copy.deepcopy(block["input"])
        known = name in tools.TOOL_NAMES
        error = None
        if not known:
            error = f"unknown tool {name!r}"
        else:
            try:
                result = self.state.call(name, copy.deepcopy(arguments))
            except tools.ToolError as exc:
                error = str(exc)
        if error is not None:
            result = {"error": error}
        result_json = json.dumps(result)
        latency_ms = pricing.tool_latency_ms(name) if known else 0
        self.run.tool_calls.append(
            ToolCall(
                tool_use_id=block["id"],
                name=name,
                input=arguments,
                result=result,
                result_json=result_json,
                ok=error is None,
                error=error,
                turn=index,
                start_offset_ms=self.clock_ms,
                latency_ms=latency_ms,
            )
        )
        self.clock_ms += latency_ms
        if not known:
            return None
        self.pending_input_tokens += pricing.count_tokens(result_json)
        tool_result = {"type": "tool_result", "tool_use_id": block["id"], "content": result_json}
        if error is not None:
            tool_result["is_error"] = True
        return tool_result

    def finish(self, answer=None, error=None):
        run = self.run
        run.answer = answer
        run.status = "ok" if error is None else "error"
        run.error = error
        run.cost_cents = float(self.cost)
        run.latency_ms = self.clock_ms
        return run


def run_reservo_agent(question, model_script, state=None):
    """Play ``model_script`` for ``question`` against ``state`` (default: the module's state).

    Never raises for a bad script: problems end the run with ``status="error"``.
    """
    state = tools.STATE if state is None else state
    loop = _Run(question, state)
    if not isinstance(model_script, list):
        return loop.finish(error="model script must be a list of turns")
    for index, turn in enumerate(model_script):
        problem = _turn_problem(turn)
        if problem:
            return loop.finish(error=f"model turn {index}: {problem}")
        content = loop.play_turn(index, turn)
        tool_uses = [block for block in content if block["type"] == "tool_use"]
        stop_reason = turn["stop_reason"]
        if stop_reason == "end_turn":
            if tool_uses:
                return loop.finish(error=f"model turn {index}: end_turn with a tool_use block")
            return loop.finish(answer=_text(content))
        if stop_reason not in CONTINUE_STOP_REASONS:
            return loop.finish(error=f"model turn {index}: model stopped with stop_reason {stop_reason!r}")
        tool_results = []
        for block in tool_uses:
            tool_result = loop.call_tool(index, block)
            if tool_result is None:
                return loop.finish(error=f"model turn {index}: unknown tool {block['name']!r}")
            tool_results.append(tool_result)
        if tool_results:
            loop.run.messages.append({"role": "user", "content": tool_results})
    return loop.finish(error=f"model script ran out after {len(model_script)} turns without an end_turn")
