"""Deterministic cost and latency of a scripted Reservo run.

Nothing here reads a clock or calls a model: the same script gives the same figures on
every machine, which is what lets a golden case carry a cost and a latency threshold.

Tokens. ``count_tokens(text) = ceil(len(text) / 4)`` (characters as Python counts them;
0 for an empty string). A model turn is billed for:

- input tokens: the question (first turn only) plus the ``result_json`` of every tool
  result fed back to it (the results of the previous turn's tool calls);
- output tokens: each of its text blocks, plus each tool_use block's input as
  ``json.dumps(input, sort_keys=True)`` (so reordering keys in a script file changes
  nothing).

Each block is counted on its own (one ceil per block). Tool results the model never
read, because the script ran out or stopped, are not billed.

Cost. ``cost_cents = input_tokens * 0.3 / 1000 + output_tokens * 1.5 / 1000``
(0.3 cents per 1K input tokens, 1.5 cents per 1K output tokens), computed in Decimal and
reported as a float, exact to 4 decimal places.

Latency. Every model turn takes ``MODEL_TURN_MS`` (400 ms) and every tool call its
entry in ``TOOL_LATENCY_MS``; turns and calls run one after another, so a run's latency
is their sum. Text length does not change latency, and a tool call that never ran (an
unknown tool) takes 0 ms.
"""

import json
import math
from decimal import Decimal

CHARS_PER_TOKEN = 4
INPUT_CENTS_PER_1K_TOKENS = Decimal("0.3")
OUTPUT_CENTS_PER_1K_TOKENS = Decimal("1.5")

MODEL_TURN_MS = 400
TOOL_LATENCY_MS = {"quote_room": 120, "book_room": 250, "cancel_booking": 200}


def count_tokens(text):
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def tool_input_text(tool_input):
    """The text a tool_use block's input is counted as."""
    return json.dumps(tool_input, sort_keys=True)


def output_tokens(content):
    """Output tokens of one model turn's content blocks (text and tool_use inputs)."""
    total = 0
    for block in content:
        if block.get("type") == "text":
            total += count_tokens(block.get("text", ""))
        elif block.get("type") == "tool_use":
            total += count_tokens(tool_input_text(block.get("input", {})))
    return total


def cost_decimal(input_tokens, output_tokens):
    return (
        Decimal(input_tokens) * INPUT_CENTS_PER_1K_TOKENS + Decimal(output_tokens) * OUTPUT_CENTS_PER_1K_TOKENS
    ) / 1000


def cost_cents(input_tokens, output_tokens):
    """Cost in cents of EUR of the given token counts, as a float."""
    return float(cost_decimal(input_tokens, output_tokens))


def tool_latency_ms(name):
    """Latency of one call of tool ``name``; 0 for a tool Reservo does not have (it never ran)."""
    return TOOL_LATENCY_MS.get(name, 0)
