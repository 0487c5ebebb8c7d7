"""GET /v1/api/scorers: the built-in scorers and agent checks, with what config each takes."""

from checks.scorers import AGENT_CHECK_IDS, BUILTIN_IDS


def test_it_lists_the_built_ins_then_the_agent_checks(actors):
    response = actors.api().get("/v1/api/scorers")
    assert response.status_code == 200
    ids = [s["id"] for s in response.json()["results"]]
    assert ids == [*BUILTIN_IDS, *AGENT_CHECK_IDS]
    assert len(ids) == 18  # the design's 13, regex; tool_choice, tool_output_schema, tool_output, tool_calls


def test_it_says_which_scorers_need_config_and_what_config_they_take(actors):
    scorers = {s["id"]: s for s in actors.api().get("/v1/api/scorers").json()["results"]}
    assert scorers["answered"]["needs_config"] is False
    assert scorers["answered"]["description"]
    latency = scorers["latency_budget"]
    assert latency["needs_config"] is True
    assert latency["config_schema"]["required"] == ["ms"]
    assert latency["expectation_keys"] == ["latency_threshold_ms"]
    assert scorers["tool_choice"]["kind"] == "agent_check"
    assert "expected_tools" in scorers["tool_choice"]["config_schema"]["properties"]


def test_it_needs_a_project_key(actors):
    response = actors.api(key="").get("/v1/api/scorers")
    assert response.status_code == 401
    assert response["Content-Type"] == "application/problem+json"
