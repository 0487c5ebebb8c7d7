"""The published JSON Schema of a golden case's ``expectations``.

Expectations configure the checks a case is gated on. Unknown keys are refused, so a
typo such as ``expected_tool`` is a 400 naming the field instead of a check that
silently never runs. Served at ``GET /v1/api/schemas/expectations``.

The order of the properties is the order the gate reports a case's checks in: each
scorer names the expectation that turns it on (``Scorer.gated_by``), and
``gating_scorers`` walks the keys in this order.
"""

TOOL_MATCH_MODES = ["exact", "in_order", "any_order", "superset"]
TOOL_CALLS_MATCH_MODES = ["strict", "unordered", "superset", "subset"]
ARGS_MATCH_MODES = ["subset", "exact", "ignore"]
# answer_check values that name a built-in check; any other value names a judge criterion.
ANSWER_CHECKS = {"exact": "exact_match", "contains": "contains", "regex": "regex", "json": "json_valid", "none": None}

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
        "expected_tool_calls": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "minLength": 1},
                    "args": {
                        "type": "object",
                        "description": 'Expected arguments; a value may be a matcher: {"$regex": ...}, '
                        '{"$approx": 3.0, "tol": 0.01}, {"$in": [...]}, {"$any": true}.',
                    },
                },
                "required": ["name"],
                "additionalProperties": False,
            },
            "description": "Tool calls the agent must make, with their arguments (checked by tool_calls).",
        },
        "tool_calls_match": {
            "enum": TOOL_CALLS_MATCH_MODES,
            "description": "How expected_tool_calls is compared with the calls made: strict (same calls, same "
            "order; the default), unordered (same calls, any order), superset (at least these calls), subset "
            "(no call outside these).",
        },
        "args_match": {
            "enum": ARGS_MATCH_MODES,
            "description": "How a call's arguments are compared: subset (each expected argument is there and "
            "matches; the default), exact (the same keys), ignore (names only).",
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
        "answer_check": {
            "type": "string",
            "minLength": 1,
            "maxLength": 100,
            "description": "How the expected answer is checked: exact (exact_match), contains, regex (with "
            "output_regex), json (json_valid: the parsed answer equals the expected answer, matchers allowed, and "
            "validates against output_schema when given), the id of a judge criterion, or none "
            "(a reviewer decided it is not checked). A case with an expected answer and no answer_check is flagged.",
        },
        "output_schema": {"type": "object", "description": "JSON Schema of the final answer (json_valid)."},
        "contains": {
            "anyOf": [
                {"type": "string", "minLength": 1},
                {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1},
                {
                    "type": "object",
                    "properties": {
                        "value": {
                            "anyOf": [
                                {"type": "string", "minLength": 1},
                                {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1},
                            ]
                        },
                        "mode": {"enum": ["all", "any"]},
                    },
                    "required": ["value"],
                    "additionalProperties": False,
                },
            ],
            "description": "A string the answer must contain, several (all of them), or "
            '{"value": [...], "mode": "any"} (contains).',
        },
        "output_regex": {
            "anyOf": [
                {"type": "string", "minLength": 1},
                {
                    "type": "object",
                    "properties": {
                        "pattern": {"type": "string", "minLength": 1},
                        "flags": {"type": "string", "pattern": "^[ims]*$"},
                        "negate": {"type": "boolean"},
                    },
                    "required": ["pattern"],
                    "additionalProperties": False,
                },
            ],
            "description": "A regular expression the answer must match (RE2: linear time; flags i, m, s; negate: "
            "must not match) (regex).",
        },
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
