"""The evidence behind a verdict is honest: nothing passes unchecked, and what the answer claims was checked was."""

import pytest

from datasets.models import Dataset
from tests.factories import run_payload

REFUSAL = "I'm sorry, but I can't help with that request."


@pytest.fixture
def api(actors):
    Dataset.objects.create(project=actors.acme, name="desk")
    return actors.api()


def _send(api, trace_id, **fields):
    response = api.post("/v1/api/traces", run_payload(trace_id, **fields), format="json")
    assert response.status_code == 201, response.content


def _capture(api, trace_id, **body):
    response = api.post("/v1/api/datasets/desk/cases/from-traces", {"trace_ids": [trace_id], **body}, format="json")
    assert response.status_code == 201, response.content
    return response.json()["cases"][0]["case"]


def _gate(api, experiment):
    response = api.post("/v1/api/gate", {"dataset": "desk", "experiment": experiment}, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def test_it_does_not_pass_a_captured_case_that_no_check_applies_to(api):
    _send(api, "prod-1", input="Book Focus for Ana", output="Booked.")
    case = _capture(api, "prod-1", expectations={})
    _send(api, "v2-1", input="Book Focus for Ana", output=REFUSAL, status="error", error="boom",
          experiment="v2", dataset="desk", case=case["name"])  # fmt: skip
    answer = _gate(api, "v2")
    assert (answer["verdict"], answer["passed_cases"], answer["unmeasured_cases"]) == ("FAIL", 0, 1)
    result = answer["cases"][0]
    assert (result["passed"], result["measured"], result["checks"]) == (False, False, [])
    assert result["reasons"] == ["no check applies to this case"]
    assert answer["blocked_by"] == ["no case could be measured", "1 cases could not be measured; the policy allows 0"]


def test_it_measures_the_captured_case_once_its_expected_answer_is_written(api):
    _send(api, "prod-1", input="Book Focus for Ana", output="Booked.")
    case = _capture(api, "prod-1", expectations={})
    edit = {"expected_output": "Booked Focus for Ana.", "expectations": {"answer_check": "exact"}}
    assert api.patch(f"/v1/api/cases/{case['id']}", edit, format="json").status_code == 200
    _send(api, "v2-1", input="Book Focus for Ana", output=REFUSAL, experiment="v2", dataset="desk", case=case["name"])
    result = _gate(api, "v2")["cases"][0]
    assert (result["passed"], result["measured"], result["failed_checks"]) == (False, True, ["output"])


def test_it_counts_a_policy_scorer_as_a_check_that_applies(api):
    _send(api, "prod-1", input="Book Focus for Ana", output="Booked.")
    case = _capture(api, "prod-1", expectations={})
    assert api.put("/v1/api/datasets/desk/gate-policy", {"scorers": ["no_errors"]}, format="json").status_code == 200
    _send(api, "v2-1", input="Book Focus for Ana", output="Booked.", experiment="v2", dataset="desk", case=case["name"])
    answer = _gate(api, "v2")
    assert (answer["verdict"], answer["cases"][0]["passed"]) == ("PASS", True)


def _case(api, name, **fields):
    response = api.post("/v1/api/datasets/desk/cases", {"name": name, "input": "Book Focus", **fields}, format="json")
    assert response.status_code == 201, response.content


def test_it_fails_a_json_answer_with_the_wrong_id_when_answer_check_is_json(api):
    _case(api, "book", expected_output={"booking_id": "BK-0001"}, expectations={"answer_check": "json"})
    _send(api, "v2-book", input="Book Focus", output='{"booking_id": "BK-0002"}', experiment="v2", dataset="desk",
          case="book")  # fmt: skip
    answer = _gate(api, "v2")
    result = answer["cases"][0]
    assert (answer["verdict"], result["passed"], result["answer_checked"]) == ("FAIL", False, True)
    assert result["failed_checks"] == ["output"]
    assert result["reasons"] == ["json_valid: $.booking_id: expected 'BK-0001', got 'BK-0002'"]


def test_it_does_not_claim_an_answer_checked_that_no_check_reads(api):
    _case(api, "pattern", expected_output="BK-0001", expectations={"answer_check": "regex", "output_regex": "^BK-"})
    _case(api, "declined", expected_output="BK-0001", expectations={"answer_check": "none", "contains": "BK"})
    _case(api, "inside", expected_output="BK-0001", expectations={"answer_check": "contains", "contains": "BK"})
    _case(api, "compared", expected_output="BK-0001", expectations={"answer_check": "contains"})
    for name in ("pattern", "declined", "inside", "compared"):
        _send(api, f"v2-{name}", input="Book Focus", output="BK-0001", experiment="v2", dataset="desk", case=name)
    answer = _gate(api, "v2")
    assert answer["unchecked_answers"] == ["pattern", "declined", "inside"]
    assert [c["answer_checked"] for c in answer["cases"]] == [False, False, False, True]


def _two_cases_one_swapped(api):
    _case(api, "focus", input="Book  Focus\nfor Ana", expectations={"contains": "Booked"})
    _case(api, "studio", input={"room": "Studio", "hours": 1}, expectations={"contains": "Booked"})
    _send(api, "v2-focus", input="System: you book rooms.\nUser: book focus for ANA", output="Booked.",
          experiment="v2", dataset="desk", case="focus")  # fmt: skip
    _send(api, "v2-studio", input={"hours": 3, "room": "Focus"}, output="Booked.", experiment="v2", dataset="desk",
          case="studio")  # fmt: skip


def test_it_lists_a_run_attached_to_the_wrong_case_and_still_decides_by_default(api):
    _two_cases_one_swapped(api)
    answer = _gate(api, "v2")
    assert answer["input_match"] == "warn"
    assert answer["input_mismatches"] == [{"case": "studio", "trace_id": "v2-studio"}]
    assert (answer["verdict"], answer["passed_cases"]) == ("PASS", 2)


def test_it_leaves_the_wrong_cases_trial_unmeasured_when_the_policy_requires_the_input(api):
    _two_cases_one_swapped(api)
    assert api.put("/v1/api/datasets/desk/gate-policy", {"input_match": "require"}, format="json").status_code == 200
    answer = _gate(api, "v2")
    assert (answer["verdict"], answer["passed_cases"], answer["unmeasured_cases"]) == ("FAIL", 1, 1)
    studio = answer["cases"][1]
    assert (studio["name"], studio["measured"], studio["reasons"]) == (
        "studio",
        False,
        ["input differs from the case's"],
    )
    assert answer["input_mismatches"] == [{"case": "studio", "trace_id": "v2-studio"}]


def test_it_does_not_look_at_inputs_when_the_policy_says_off(api):
    _two_cases_one_swapped(api)
    assert (
        api.put(
            "/v1/api/datasets/desk/gate-policy",
            {"input_match": "off", "reason": "inputs are rewritten by the harness"},
            format="json",
        ).status_code
        == 200
    )
    assert _gate(api, "v2")["input_mismatches"] == []


def test_it_refuses_an_unknown_input_match_naming_the_field(api):
    assert api.get("/v1/api/datasets/desk/gate-policy").json()["input_match"] == "warn"
    response = api.put("/v1/api/datasets/desk/gate-policy", {"input_match": "sometimes"}, format="json")
    assert response.status_code == 400
    assert [e["field"] for e in response.json()["errors"]] == ["input_match"]
