"""The gate's newer rules: arguments of tool calls, answer checks, the first floor, and the judge's cap."""

import pytest
from django.test import TestCase

from datasets.models import Dataset, GoldenCase
from gating.models import FloorChange, GatePolicy
from scoring.judge.services import judge_configure
from scoring.models import Abstention, Score
from tests.factories import run_payload

BOOK_ANA = {"name": "book_room", "args": {"room": "Focus", "member": "Ana"}}


@pytest.fixture
def dataset(actors):
    return Dataset.objects.create(project=actors.acme, name="desk")


def _case(dataset, name, **fields):
    return GoldenCase.objects.create(dataset=dataset, name=name, **fields)


def _run(actors, case, experiment="v1", **fields):
    payload = run_payload(f"{experiment}-{case}", dataset="desk", case=case, experiment=experiment, **fields)
    assert actors.api().post("/v1/api/traces", payload, format="json").status_code == 201


def _gate(actors, experiment="v1", **body):
    return actors.api().post("/v1/api/gate", {"dataset": "desk", "experiment": experiment, **body}, format="json")


def _tool(name, args):
    return [{"span_id": "t", "kind": "tool", "name": name, "input": args}]


def test_a_wrong_argument_fails_the_case_with_its_tool_args_evidence(actors, dataset):
    _case(dataset, "book", expectations={"expected_tool_calls": [BOOK_ANA]})
    _run(actors, "book", spans=_tool("book_room", {"room": "Focus", "member": "Anna"}))
    case = _gate(actors).json()["cases"][0]
    assert (case["passed"], case["tool_calls_ok"], case["failed_checks"]) == (False, False, ["tool_args"])
    assert case["tool_call_errors"] == ["book_room.member: expected 'Ana', got 'Anna'"]
    assert case["reasons"] == ["tool_calls: book_room.member: expected 'Ana', got 'Anna'"]
    assert case["tool_choice_ok"] is True  # names alone are not checked: the seed's line stays as it was


def test_an_expected_answer_is_checked_the_way_answer_check_says(actors, dataset):
    _case(dataset, "exact", expected_output="75.00 EUR", expectations={"answer_check": "exact"})
    _case(dataset, "inside", expected_output="75.00 EUR", expectations={"answer_check": "contains"})
    _case(dataset, "pattern", expected_output="x", expectations={"answer_check": "regex", "output_regex": r"^\d+"})
    _case(dataset, "unchecked", expected_output="75.00 EUR", expectations={"contains": "EUR"})
    _case(dataset, "declined", expected_output="75.00 EUR", expectations={"answer_check": "none", "contains": "EUR"})
    for name in ("exact", "inside", "pattern", "unchecked", "declined"):
        _run(actors, name, output="Total: 75.00 EUR")
    answer = _gate(actors).json()
    by_name = {c["name"]: c for c in answer["cases"]}
    assert [c["scorer"] for c in by_name["exact"]["checks"]] == ["exact_match"]
    assert by_name["exact"]["passed"] is False
    assert by_name["inside"]["passed"] is True and by_name["inside"]["checks"][0]["scorer"] == "contains"
    assert by_name["pattern"]["passed"] is False and by_name["pattern"]["checks"][0]["scorer"] == "regex"
    # regex reads output_regex and none reads nothing: neither compares the expected answer.
    assert [name for name, c in by_name.items() if not c["answer_checked"]] == ["pattern", "unchecked", "declined"]
    assert answer["unchecked_answers"] == ["pattern", "unchecked", "declined"]


def test_init_floor_records_a_failing_first_baseline_and_starts_the_floor_there(actors, dataset):
    for name in ("a", "b", "c", "d"):
        _case(dataset, name, expectations={"contains": "EUR"})
        _run(actors, name, output="75 EUR" if name != "d" else "no price")
    answer = _gate(actors, set_baseline=True, init_floor=True).json()
    assert (answer["verdict"], answer["baseline_recorded"], answer["floor_initialised"]) == ("FAIL", True, True)
    policy = GatePolicy.objects.get(dataset=dataset)
    assert (policy.baseline.name, policy.min_pass_rate) == ("v1", 0.75)
    change = FloorChange.objects.get(policy=policy)
    assert (change.old_floor, change.new_floor, change.source) == (1.0, 0.75, "init")
    # From then on the ratchet applies: the same pass rate passes, and the floor cannot go down through the API.
    assert _gate(actors).json()["verdict"] == "PASS"
    lowered = actors.api().put("/v1/api/datasets/desk/gate-policy", {"min_pass_rate": 0.5}, format="json")
    assert lowered.status_code == 409


def test_init_floor_once_a_baseline_exists_only_records_a_pass(actors, dataset):
    _case(dataset, "a", expectations={"contains": "EUR"})
    _run(actors, "a", output="75 EUR")
    _gate(actors, set_baseline=True)
    _run(actors, "a", experiment="v2", output="none")
    answer = _gate(actors, experiment="v2", set_baseline=True, init_floor=True).json()
    assert (answer["baseline_recorded"], answer["floor_initialised"]) == (False, False)
    assert GatePolicy.objects.get(dataset=dataset).baseline.name == "v1"


def test_init_floor_without_set_baseline_is_refused_naming_the_field(actors, dataset):
    _case(dataset, "a")
    _run(actors, "a")
    response = _gate(actors, init_floor=True)
    assert response.status_code == 400 and response.json()["errors"][0]["field"] == "init_floor"


def test_a_criterion_named_only_by_a_case_counts_in_the_judge_cap_before_any_call(actors, dataset, settings):
    settings.EVALSITE_REQUEST_TIMEOUT_SECONDS = 30
    judge_configure(
        project=actors.acme, endpoint="http://127.0.0.1:9/v1", model="m", timeout_seconds=30,
        criteria={"helpful": "Is it helpful?"},
    )  # fmt: skip
    _case(dataset, "a", expectations={"scorers": ["helpful"]})
    _case(dataset, "b", expectations={"contains": "EUR"})
    _run(actors, "a")
    _run(actors, "b")
    with TestCase.captureOnCommitCallbacks(execute=False):
        response = _gate(actors)
    assert response.status_code == 202  # 30 s // (30 s x 1 criterion) = 1 run; the gate has 2
    assert not Score.objects.exists() and not Abstention.objects.exists()
