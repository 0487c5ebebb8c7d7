"""The gate through the HTTP API: evidence per case, verdict, records, baseline and ratchet."""

import pytest

from datasets.models import Dataset, GoldenCase
from gating.models import FloorChange, GatePolicy, GateRun
from scoring.models import Score
from tests.factories import run_payload

QUOTE_SCHEMA = {
    "type": "object",
    "required": ["total_cents"],
    "properties": {"total_cents": {"type": "integer"}},
}


def _quote_spans(tool="quote_room", total=7500):
    return [
        {"span_id": "llm-1", "kind": "llm", "name": "model"},
        {
            "span_id": "tool-1",
            "kind": "tool",
            "name": tool,
            "input": {"room": "Focus"},
            "output": {"total_cents": total},
        },
    ]


@pytest.fixture
def dataset(actors):
    dataset = Dataset.objects.create(project=actors.acme, name="reservo")
    common = {"cost_threshold_cents": 1.0, "latency_threshold_ms": 2000}
    GoldenCase.objects.create(
        dataset=dataset,
        name="quote_focus_pro_3h",
        input="q1",
        expectations={
            "expected_tools": ["quote_room"],
            "tool_output": {"total_cents": 7500},
            "tool_output_schema": QUOTE_SCHEMA,
            **common,
        },
    )
    GoldenCase.objects.create(
        dataset=dataset,
        name="quote_focus_basic_3h",
        input="q2",
        expectations={"expected_tools": ["quote_room"], **common},
    )
    return dataset


def _upload(actors, experiment, runs):
    """runs: {case name: run payload overrides}; a case left out gets no run."""
    batch = [
        run_payload(f"{experiment}-{case}", dataset="reservo", case=case, experiment=experiment, **fields)
        for case, fields in runs.items()
    ]
    response = actors.api().post("/v1/api/traces", {"traces": batch}, format="json")
    assert response.status_code == 201, response.content


def _gate(actors, **body):
    return actors.api().post("/v1/api/gate", {"dataset": "reservo", **body}, format="json")


CLEAN = {"spans": _quote_spans(), "cost_cents": 0.5, "latency_ms": 900}


def test_a_clean_experiment_passes_with_every_seed_field(actors, dataset):
    _upload(actors, "v1", {"quote_focus_pro_3h": CLEAN, "quote_focus_basic_3h": CLEAN})
    response = _gate(actors, experiment="v1")
    assert response.status_code == 200, response.content
    answer = response.json()
    assert (answer["verdict"], answer["passed"], answer["passed_cases"], answer["total_cases"]) == ("PASS", True, 2, 2)
    assert (answer["pass_rate"], answer["floor"], answer["baseline"], answer["delta"]) == (1.0, 1.0, None, None)
    case = answer["cases"][0]
    assert case["name"] == "quote_focus_pro_3h" and case["trace_id"] == "v1-quote_focus_pro_3h"
    assert case["actual_tools"] == ["quote_room"]
    assert case["tool_choice_ok"] and case["schema_errors"] == [] and case["output_errors"] == []
    assert case["schema_checked"] and case["output_checked"]
    assert (case["cost_cents"], case["cost_ok"], case["latency_ms"], case["latency_ok"]) == (0.5, True, 900, True)
    assert [c["scorer"] for c in case["checks"]] == [
        "tool_choice", "tool_output_schema", "tool_output", "cost_budget", "latency_budget",
    ]  # fmt: skip
    assert all(c["status"] == "passed" for c in case["checks"])
    assert case["failed_checks"] == [] and case["reasons"] == []
    # The second case has no schema or output expectation: nothing was checked, and it says so.
    other = answer["cases"][1]
    assert other["schema_checked"] is False and other["output_checked"] is False


def test_a_gate_asked_again_reads_stored_scores_without_loading_the_runs_spans(actors, dataset):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    _upload(actors, "v1", {"quote_focus_pro_3h": CLEAN, "quote_focus_basic_3h": CLEAN})
    first = _gate(actors, experiment="v1").json()
    with CaptureQueriesContext(connection) as queries:
        again = _gate(actors, experiment="v1").json()
    assert not [q["sql"] for q in queries if "span_id" in q["sql"]]  # only the tool spans' names were read
    for key in ("verdict", "passed_cases", "total_cases"):
        assert again[key] == first[key]
    assert [c["checks"] for c in again["cases"]] == [c["checks"] for c in first["cases"]]
    assert again["cases"][0]["actual_tools"] == ["quote_room"]


def test_the_seeds_regression_fails_the_batch_naming_the_case_check_and_value(actors, dataset):
    _upload(
        actors,
        "v2",
        {"quote_focus_pro_3h": {**CLEAN, "spans": _quote_spans(tool="book_room")}, "quote_focus_basic_3h": CLEAN},
    )
    answer = _gate(actors, experiment="v2").json()
    assert (answer["verdict"], answer["passed_cases"], answer["total_cases"]) == ("FAIL", 1, 2)
    case = answer["cases"][0]
    assert (case["passed"], case["tool_choice_ok"], case["actual_tools"]) == (False, False, ["book_room"])
    # The target tool never ran: its schema and values were not checked, and an empty list says nothing.
    assert (case["schema_checked"], case["output_checked"]) == (False, False)
    assert case["failed_checks"] == ["tool_choice"]
    assert case["unmeasured_checks"] == ["schema", "output"]
    statuses = {c["scorer"]: c["status"] for c in case["checks"]}
    assert statuses["tool_output_schema"] == "abstained" and statuses["tool_output"] == "abstained"
    assert case["reasons"][0].startswith("tool_choice: expected ['quote_room'], called ['book_room']")
    assert answer["cases"][1]["passed"] is True


def test_each_kind_of_broken_value_is_reported_in_its_field(actors, dataset):
    _upload(
        actors,
        "v3",
        {
            "quote_focus_pro_3h": {**CLEAN, "spans": _quote_spans(total="75"), "cost_cents": 3.0, "latency_ms": 5000},
            "quote_focus_basic_3h": CLEAN,
        },
    )
    case = _gate(actors, experiment="v3").json()["cases"][0]
    assert case["schema_errors"] == ["$.total_cents: '75' is not of type 'integer'"]
    assert case["output_errors"] == ["total_cents: expected 7500, got '75'"]
    assert (case["cost_ok"], case["cost_cents"], case["latency_ok"], case["latency_ms"]) == (False, 3.0, False, 5000)
    assert case["failed_checks"] == ["schema", "output", "threshold"]


def test_a_case_with_no_run_fails_with_that_reason(actors, dataset):
    _upload(actors, "v4", {"quote_focus_basic_3h": CLEAN})
    answer = _gate(actors, experiment="v4").json()
    missing = answer["cases"][0]
    assert (missing["passed"], missing["trace_id"], missing["reasons"]) == (
        False,
        None,
        ["no run recorded for this case"],
    )
    assert answer["verdict"] == "FAIL"


def test_scores_are_computed_once_and_reused_by_the_next_gate(actors, dataset):
    _upload(actors, "v1", {"quote_focus_pro_3h": CLEAN, "quote_focus_basic_3h": CLEAN})
    _gate(actors, experiment="v1")
    written = Score.objects.count()
    assert written == 8
    _gate(actors, experiment="v1")
    assert Score.objects.count() == written


def test_every_verdict_is_stored_with_the_case_versions(actors, dataset):
    _upload(actors, "v1", {"quote_focus_pro_3h": CLEAN, "quote_focus_basic_3h": CLEAN})
    answer = _gate(actors, experiment="v1").json()
    gate_run = GateRun.objects.get(pk=answer["gate_run_id"])
    assert (gate_run.verdict, gate_run.pass_rate, gate_run.status) == ("PASS", 1.0, "done")
    assert gate_run.case_versions == {str(c.pk): c.version for c in dataset.cases.all()}
    fetched = actors.api().get(f"/v1/api/gate-runs/{gate_run.pk}")
    assert fetched.json() == answer
    listed = actors.api().get("/v1/api/gate-runs?verdict=PASS").json()["results"]
    assert [r["gate_run_id"] for r in listed] == [gate_run.pk]


def test_set_baseline_on_a_pass_records_it_and_later_gates_compare_with_it(actors, dataset):
    _upload(actors, "v1", {"quote_focus_pro_3h": CLEAN, "quote_focus_basic_3h": CLEAN})
    assert _gate(actors, experiment="v1", set_baseline=True).json()["verdict"] == "PASS"
    assert GatePolicy.objects.get(dataset=dataset).baseline.name == "v1"
    _upload(
        actors,
        "v2",
        {"quote_focus_pro_3h": {**CLEAN, "spans": _quote_spans(tool="book_room")}, "quote_focus_basic_3h": CLEAN},
    )
    answer = _gate(actors, experiment="v2").json()
    assert answer["baseline"] == {"experiment": "v1", "pass_rate": 1.0}
    assert answer["delta"] == pytest.approx(-0.5)
    tool_choice = next(r for r in answer["comparison"] if r["scorer"] == "tool_choice")
    assert (tool_choice["base"]["n"], tool_choice["candidate"]["n"], tool_choice["decidable"]) == (2, 2, False)


def test_set_baseline_on_a_fail_records_nothing(actors, dataset):
    _upload(
        actors,
        "v2",
        {"quote_focus_pro_3h": {**CLEAN, "spans": _quote_spans(tool="book_room")}, "quote_focus_basic_3h": CLEAN},
    )
    assert _gate(actors, experiment="v2", set_baseline=True).json()["verdict"] == "FAIL"
    assert not GatePolicy.objects.filter(dataset=dataset, baseline__isnull=False).exists()


def test_the_ratchet_raises_the_floor_when_a_better_pass_becomes_the_baseline(actors, dataset):
    GatePolicy.objects.create(dataset=dataset, min_pass_rate=0.5)
    _upload(actors, "v1", {"quote_focus_pro_3h": CLEAN, "quote_focus_basic_3h": CLEAN})
    _gate(actors, experiment="v1", set_baseline=True)
    policy = GatePolicy.objects.get(dataset=dataset)
    assert policy.min_pass_rate == 1.0
    change = FloorChange.objects.get(policy=policy)
    assert (change.old_floor, change.new_floor, change.source) == (0.5, 1.0, "ratchet")


def test_the_gate_names_unknown_things_and_isolates_projects(actors, dataset):
    assert _gate(actors, experiment="never-ran").status_code == 404
    assert actors.api().post("/v1/api/gate", {"dataset": "nope", "experiment": "v1"}, format="json").status_code == 404
    assert (
        actors.api().post("/v1/api/gate", {"experiment": "v1"}, format="json").json()["errors"][0]["field"] == "dataset"
    )
    _upload(actors, "v1", {"quote_focus_pro_3h": CLEAN})
    assert (
        actors.outsider_api()
        .post("/v1/api/gate", {"dataset": "reservo", "experiment": "v1"}, format="json")
        .status_code
        == 404
    )
    gate_run_id = _gate(actors, experiment="v1").json()["gate_run_id"]
    assert actors.outsider_api().get(f"/v1/api/gate-runs/{gate_run_id}").status_code == 404


def test_a_large_dataset_is_answered_202_and_finished_by_a_worker_task(actors, dataset, settings):
    settings.EVALSITE_GATE_SYNC_MAX_CASES = 1
    _upload(actors, "v1", {"quote_focus_pro_3h": CLEAN, "quote_focus_basic_3h": CLEAN})
    from django.test import TestCase

    with TestCase.captureOnCommitCallbacks(execute=False) as callbacks:
        response = _gate(actors, experiment="v1")
    assert response.status_code == 202
    gate_run_id = response.json()["gate_run_id"]
    assert actors.api().get(f"/v1/api/gate-runs/{gate_run_id}").json()["status"] == "running"
    assert len(callbacks) == 1
    from gating.tasks import gate_evaluate_task

    gate_evaluate_task.run(gate_run_id)
    assert actors.api().get(f"/v1/api/gate-runs/{gate_run_id}").json()["verdict"] == "PASS"
