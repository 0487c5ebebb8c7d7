"""The published JSON Schema of a golden case's ``expectations``.

Expectations configure the checks a case is gated on. Unknown keys are refused, so a
typo such as ``expected_tool`` is a 400 naming the field instead of a check that
silently never runs. Served at ``GET /v1/api/schemas/expectations``.

The order of the properties is the order the gate reports a case's checks in: each
scorer names the expectation that turns it on (``Scorer.gated_by``), and
``gating_scorers`` walks the keys in this order.
"""

TOOL_MATCH_MODES = ["exact", "in_order", "any_order", "superset"]

EXPECTATIONS_SCHEMA = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "title": "Golden case expectations",
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "expected_tools": {
            "type": "array",
            "items": {"type": "string", "minLength": 1},
            "description": "Tools the agent must call (checked by tool_choice).",
        },
        "tool_match": {
            "enum": TOOL_MATCH_MODES,
            "description": "How expected_tools is compared with the tools called: exact (same list, same order; "
            "the default), in_order (expected tools appear in this order, others may come between), "
            "any_order (same tools, any order), superset (every expected tool is called at least once).",
        },
        "target_tool": {
            "type": "string",
            "minLength": 1,
            "description": "The tool whose last result tool_output and tool_output_schema check "
            "(default: the last of expected_tools).",
        },
        "tool_output_schema": {
            "type": "object",
            "description": "JSON Schema the target tool's last result must satisfy (checked by tool_output_schema).",
        },
        "tool_output": {
            "type": "object",
            "description": "Field values the target tool's last result must carry (checked by tool_output).",
        },
        "output_schema": {"type": "object", "description": "JSON Schema of the final answer (json_valid)."},
        "contains": {"type": "string", "minLength": 1, "description": "A string the answer must contain (contains)."},
        "required_span": {
            "type": "object",
            "additionalProperties": False,
            "minProperties": 1,
            "properties": {
                "kind": {"enum": ["llm", "tool", "retrieval", "agent", "other"]},
                "name": {"type": "string"},
            },
            "description": "A span the run must record (span_present).",
        },
        "tool_budget": {"type": "integer", "minimum": 0, "description": "Most tool calls allowed (tool_efficiency)."},
        "cost_threshold_cents": {"type": "number", "minimum": 0, "description": "Most the run may cost (cost_budget)."},
        "latency_threshold_ms": {
            "type": "integer",
            "minimum": 0,
            "description": "Longest the run may take (latency_budget).",
        },
        "scorers": {
            "type": "array",
            "items": {"type": "string", "minLength": 1},
            "uniqueItems": True,
            "description": "Further scorer ids (built-in or judge criteria) this case is gated on.",
        },
    },
}
