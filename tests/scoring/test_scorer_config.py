"""Config resolution (the case wins), request config validation, and the config hash."""

import hashlib

from checks.scorers import canonical_json, config_hash, config_validate, resolve_config, run_from_payload, scorer_get


def _run(expectations=None, expected_output=None, has_case=None):
    return run_from_payload(
        {"trace_id": "t1", "output": "ok"},
        expectations=expectations,
        expected_output=expected_output,
        has_case=has_case,
    )


class TestResolveConfig:
    def test_it_uses_the_request_config_for_a_run_without_a_case(self):
        assert resolve_config(scorer_get("latency_budget"), {"ms": 500}, _run()) == {"ms": 500}

    def test_it_lets_the_cases_expectation_win_over_the_request(self):
        run = _run({"latency_threshold_ms": 2000})
        assert resolve_config(scorer_get("latency_budget"), {"ms": 500}, run) == {"ms": 2000}

    def test_it_falls_back_to_the_request_when_the_case_lacks_that_expectation(self):
        run = _run({"cost_threshold_cents": 5})
        assert resolve_config(scorer_get("latency_budget"), {"ms": 500}, run) == {"ms": 500}

    def test_it_answers_none_when_neither_the_request_nor_the_case_configures_it(self):
        run = _run({"cost_threshold_cents": 5})
        assert resolve_config(scorer_get("latency_budget"), None, run) is None

    def test_it_ignores_expectations_of_a_run_not_linked_to_a_case(self):
        run = _run({"latency_threshold_ms": 2000}, has_case=False)
        assert resolve_config(scorer_get("latency_budget"), None, run) is None

    def test_it_gives_an_empty_config_to_a_scorer_that_needs_none(self):
        assert resolve_config(scorer_get("answered"), None, _run()) == {}
        assert resolve_config(scorer_get("json_valid"), None, _run({"contains": "x"})) == {}

    def test_it_reads_the_cases_expected_output_for_exact_match(self):
        run = _run({}, expected_output="7500")
        assert resolve_config(scorer_get("exact_match"), {"expected": "6000"}, run) == {"expected": "7500"}

    def test_it_treats_a_null_expected_output_as_no_expected_answer(self):
        run = _run({}, expected_output=None, has_case=True)
        assert resolve_config(scorer_get("exact_match"), None, run) is None

    def test_it_maps_each_expectation_to_its_scorers_config(self):
        run = _run(
            {
                "contains": "7500",
                "output_schema": {"type": "object"},
                "cost_threshold_cents": 1.5,
                "tool_budget": 3,
                "required_span": {"kind": "retrieval"},
                "expected_tools": ["search_rooms", "quote_room"],
                "tool_output": {"total_cents": 7500},
                "tool_output_schema": {"type": "object"},
            }
        )
        resolved = {s: resolve_config(scorer_get(s), None, run) for s in (
            "contains", "json_valid", "cost_budget", "tool_efficiency", "span_present",
            "tool_choice", "tool_succeeded", "tool_output", "tool_output_schema",
        )}  # fmt: skip
        assert resolved == {
            "contains": {"value": "7500"},
            "json_valid": {"schema": {"type": "object"}},
            "cost_budget": {"cents": 1.5},
            "tool_efficiency": {"max_calls": 3},
            "span_present": {"kind": "retrieval"},
            "tool_choice": {"expected_tools": ["search_rooms", "quote_room"], "tool_match": "exact"},
            "tool_succeeded": {"tool": "quote_room"},
            "tool_output": {"tool_output": {"total_cents": 7500}, "target_tool": "quote_room"},
            "tool_output_schema": {"tool_output_schema": {"type": "object"}, "target_tool": "quote_room"},
        }

    def test_it_prefers_an_explicit_target_tool_over_the_last_expected_tool(self):
        run = _run({"expected_tools": ["quote_room", "book_room"], "target_tool": "quote_room", "tool_output": {}})
        assert resolve_config(scorer_get("tool_output"), None, run)["target_tool"] == "quote_room"
        assert resolve_config(scorer_get("tool_succeeded"), None, run) == {"tool": "quote_room"}

    def test_it_leaves_an_agent_check_unconfigured_when_no_target_tool_can_be_named(self):
        run = _run({"tool_output": {"total_cents": 7500}})
        assert resolve_config(scorer_get("tool_output"), None, run) is None

    def test_it_keeps_an_empty_expected_tools_list_as_a_real_expectation(self):
        run = _run({"expected_tools": [], "tool_match": "superset"})
        assert resolve_config(scorer_get("tool_choice"), None, run) == {"expected_tools": [], "tool_match": "superset"}


class TestConfigValidate:
    def test_it_accepts_a_valid_config(self):
        assert config_validate(scorer_get("latency_budget"), {"ms": 1000}) == []

    def test_it_names_the_scorer_and_the_field_of_a_bad_value(self):
        assert config_validate(scorer_get("latency_budget"), {"ms": -1}) == [
            "latency_budget.ms: -1 is less than the minimum of 0"
        ]

    def test_it_names_a_missing_required_field(self):
        assert config_validate(scorer_get("contains"), {}) == ["contains: 'value' is a required property"]

    def test_it_refuses_unknown_fields_so_a_typo_is_not_silently_ignored(self):
        problems = config_validate(scorer_get("latency_budget"), {"ms": 10, "msec": 5})
        assert problems == ["latency_budget: Additional properties are not allowed ('msec' was unexpected)"]

    def test_it_refuses_config_for_a_scorer_that_takes_none(self):
        assert config_validate(scorer_get("answered"), {"x": 1}) != []
        assert config_validate(scorer_get("answered"), {}) == []

    def test_it_lists_every_problem_with_its_path(self):
        problems = config_validate(scorer_get("tool_choice"), {"expected_tools": ["a", 3], "tool_match": "loose"})
        assert problems == [
            "tool_choice.expected_tools[1]: 3 is not of type 'string'",
            "tool_choice.tool_match: 'loose' is not one of ['exact', 'in_order', 'any_order', 'superset']",
        ]

    def test_it_refuses_a_config_that_is_not_an_object(self):
        assert config_validate(scorer_get("latency_budget"), 1000) == ["latency_budget: 1000 is not of type 'object'"]

    def test_it_checks_that_a_configured_schema_is_itself_a_valid_json_schema(self):
        problems = config_validate(scorer_get("json_valid"), {"schema": {"type": "objekt"}})
        assert len(problems) == 1
        assert problems[0].startswith("json_valid.schema: not a valid JSON Schema: $.type: 'objekt' is not valid")
        assert config_validate(scorer_get("json_valid"), {"schema": {"type": "object"}}) == []

    def test_it_requires_span_present_to_name_a_kind_or_a_name(self):
        assert config_validate(scorer_get("span_present"), {}) != []
        assert config_validate(scorer_get("span_present"), {"kind": "tool"}) == []
        assert config_validate(scorer_get("span_present"), {"kind": "toolz"}) != []


class TestConfigHash:
    def test_it_hashes_the_canonical_json_with_sha256(self):
        assert canonical_json({"b": [1, 2.5], "a": "é"}) == '{"a":"é","b":[1,2.5]}'
        assert config_hash({"ms": 1000}) == hashlib.sha256(b'{"ms":1000}').hexdigest()

    def test_it_ignores_key_order_and_whole_floats(self):
        assert config_hash({"a": 1, "b": 2.0}) == config_hash({"b": 2, "a": 1})

    def test_it_differs_for_different_configs(self):
        assert config_hash({"ms": 1000}) != config_hash({"ms": 1001})
        assert config_hash({"v": True}) != config_hash({"v": 1})

    def test_it_hashes_no_config_like_an_empty_one(self):
        assert config_hash(None) == config_hash({}) == hashlib.sha256(b"{}").hexdigest()
