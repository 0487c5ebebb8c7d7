"""How a gate run's verdict and cases are written: once, whole, or not at all.

The cases are written as they are decided (one COPY the database works through
meanwhile), inside the transaction that records the verdict: a gate that fails halfway
leaves no case behind, and a second evaluation of the same gate run that gets as far
as recording waits for the first, then finds it finished.
"""

import threading
import time

import pytest

import gating.evaluation
from datasets.models import Dataset, GoldenCase
from gating.evaluation import gate_evaluate
from gating.models import GateCase, GateRun
from tests.factories import trace_create
from tests.scoring.races import in_thread

CASES = 6


@pytest.fixture
def gate_run(actors):
    """A pet-sitting agent's gate run: six cases, one run each, all answered as expected."""
    dataset = Dataset.objects.create(project=actors.acme, name="sitter")
    for i in range(CASES):
        GoldenCase.objects.create(
            dataset=dataset, name=f"visit-{i}", input=f"Can you feed Miso on day {i}?",
            expectations={"contains": f"day {i}"},
        )  # fmt: skip
        trace_create(
            actors.acme, f"sitter-{i}", dataset="sitter", case=f"visit-{i}", experiment="v2",
            input=f"Can you feed Miso on day {i}?", output=f"Yes, day {i}.", spans=[],
        )  # fmt: skip
    experiment = dataset.project.experiments.get(name="v2")
    return GateRun.objects.create(project=actors.acme, dataset=dataset, experiment=experiment)


def test_a_gate_that_fails_while_deciding_its_cases_is_marked_failed_and_keeps_no_case(db, gate_run, monkeypatch):
    decide = gating.evaluation._case_result
    seen = []

    def breaks_on_the_fourth(case, *args):
        seen.append(case["name"])
        if len(seen) == 4:
            raise RuntimeError(f"planted failure at {case['name']}")
        return decide(case, *args)

    monkeypatch.setattr(gating.evaluation, "_case_result", breaks_on_the_fourth)
    with pytest.raises(RuntimeError, match="planted failure at visit-3"):
        gate_evaluate(gate_run_id=gate_run.pk, holder="test")
    gate_run.refresh_from_db()
    assert (gate_run.status, gate_run.verdict) == (GateRun.Status.FAILED, None)
    assert gate_run.error == "RuntimeError: planted failure at visit-3"
    assert not GateCase.objects.filter(gate_run=gate_run).exists()  # the three written before are gone


def test_two_evaluations_recording_at_once_write_the_cases_once(transactional_db, gate_run, monkeypatch):
    # Both gather their evidence, then race to record: the one that takes the gate run's
    # row writes its cases slowly enough that the other is waiting for it.
    both_gathered = threading.Barrier(2, timeout=30)
    names, decide = gating.evaluation.tool_names, gating.evaluation._case_result
    first_case = threading.Lock()

    def gathered(*args):
        both_gathered.wait()
        return names(*args)

    def slow_first_case(case, *args):
        if first_case.acquire(blocking=False):
            time.sleep(1)
        return decide(case, *args)

    monkeypatch.setattr(gating.evaluation, "tool_names", gathered)
    monkeypatch.setattr(gating.evaluation, "_case_result", slow_first_case)
    answers = []
    started = [
        in_thread(lambda: answers.append(gate_evaluate(gate_run_id=gate_run.pk, holder="one holder"))) for _ in range(2)
    ]
    for thread, _ in started:
        thread.join(60)
    errors = [error for _, errs in started for error in errs]
    assert errors == []
    assert [(a.status, a.verdict) for a in answers] == [(GateRun.Status.DONE, "PASS")] * 2
    assert sorted(GateCase.objects.filter(gate_run=gate_run).values_list("position", flat=True)) == list(range(CASES))
    gate_run.refresh_from_db()
    assert (gate_run.status, gate_run.passed_cases, gate_run.total_cases) == (GateRun.Status.DONE, CASES, CASES)


def test_an_evaluation_that_finds_its_gate_run_finished_meanwhile_answers_the_verdict(db, gate_run, monkeypatch):
    claim = gating.evaluation.gate_claim

    def another_finishes_first(gate_run_id, holder, **kwargs):
        if holder == "late":
            monkeypatch.setattr(gating.evaluation, "gate_claim", claim)
            gate_evaluate(gate_run_id=gate_run_id, holder="early")
        return claim(gate_run_id, holder, **kwargs)

    monkeypatch.setattr(gating.evaluation, "gate_claim", another_finishes_first)
    answered = gate_evaluate(gate_run_id=gate_run.pk, holder="late")
    assert (answered.status, answered.verdict, answered.passed_cases) == (GateRun.Status.DONE, "PASS", CASES)
    assert GateCase.objects.filter(gate_run=gate_run).count() == CASES
