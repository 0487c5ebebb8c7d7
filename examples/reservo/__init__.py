"""Reservo: a scripted booking agent and the golden set that gates it (seeds 000/001).

The model is a script (a list of Anthropic-shaped turns), the tools work on an
in-memory booking state, and cost and latency come from documented constants, so every
run is reproducible. ``golden_cases.jsonl`` holds the five gated cases in the shape
``POST /v1/api/datasets/{name}/import`` takes; each case's clean script is in
``metadata.model_script``. ``scripts/`` holds override scripts that each break a known
check (:data:`OVERRIDES`). Stdlib only: no Django.

Typical use, one case at a time::

    reset_state()
    run = run_reservo_agent(case["input"], case["metadata"]["model_script"])
"""

import json
from pathlib import Path

from .agent import AgentRun, ModelTurn, ToolCall, run_reservo_agent
from .tools import OUTPUT_SCHEMAS, TOOL_DEFINITIONS, ReservoState, ToolError, reset_reservo_state, reset_state

HERE = Path(__file__).resolve().parent
GOLDEN_CASES_PATH = HERE / "golden_cases.jsonl"
SCRIPTS_DIR = HERE / "scripts"

#: Override scripts: which case each replaces, and which of the seed's five checks
#: (tool_choice, schema, output, cost, latency) it must break. README.md gives the
#: gate line each one produces.
OVERRIDES = {
    "quote_books_instead": {"case": "quote_focus_pro_3h", "breaks": ["tool_choice"]},
    "no_cancel": {"case": "book_and_cancel_studio_basic_1h_diego", "breaks": ["tool_choice"]},
    "quote_wrong_hours": {"case": "quote_focus_pro_3h", "breaks": ["output"]},
    "quote_with_breakdown": {"case": "quote_focus_basic_3h", "breaks": ["schema"]},
    "book_long_answer": {"case": "book_focus_pro_3h_ana", "breaks": ["cost"]},
    "book_extra_turns": {"case": "book_boardroom_pro_1h_sofia", "breaks": ["latency"]},
    "cancel_unknown_booking": {"case": "book_and_cancel_studio_basic_1h_diego", "breaks": ["schema", "output"]},
    # Books the right room for the wrong member: the seed's value check sees it in the
    # result, the server's tool_calls check in the arguments (book_room.member).
    "book_wrong_member": {"case": "book_focus_pro_3h_ana", "breaks": ["output"]},
}


def load_golden_cases(path=GOLDEN_CASES_PATH):
    """The golden cases, in file order, as dicts."""
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def load_script(name):
    """An override script by name (``"no_cancel"`` or ``"no_cancel.json"``) or by path."""
    path = Path(name)
    if not path.is_absolute() and path.parent == Path("."):
        path = SCRIPTS_DIR / (path.name if path.suffix == ".json" else f"{path.name}.json")
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


__all__ = [
    "GOLDEN_CASES_PATH",
    "OUTPUT_SCHEMAS",
    "OVERRIDES",
    "SCRIPTS_DIR",
    "TOOL_DEFINITIONS",
    "AgentRun",
    "ModelTurn",
    "ReservoState",
    "ToolCall",
    "ToolError",
    "load_golden_cases",
    "load_script",
    "reset_reservo_state",
    "reset_state",
    "run_reservo_agent",
]
