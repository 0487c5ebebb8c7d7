"""A judge criterion against reviewers: n, accuracy, Cohen's kappa and the confusion matrix, counted in SQL;
and a policy that lets an uncalibrated criterion advise but not gate."""

import pytest

from checks.scorers import config_hash
from datasets.models import Dataset, GoldenCase, Trace
from gating.models import GatePolicy
from scoring.judge.calibration import agreement, cohens_kappa
from scoring.judge.services import judge_configure
from scoring.labels import label_config_get, label_write
from scoring.models import Score
from tests.factories import trace_create

QUESTION = "Does the answer help?"
# (reviewers' labels, judge verdict) per run: 4 agree pass, 1 human-pass/judge-fail, 2 human-fail/judge-pass, 3 agree fail.
PAIRS = [(True, True)] * 4 + [(True, False)] + [(False, True)] * 2 + [(False, False)] * 3


def _judge_score(trace, passed, reason="judged", model="m"):
    return Score.objects.create(
        project=trace.project, trace=trace, scorer="helpful", scorer_version=model, source="judge",
        config_hash=config_hash({"question": QUESTION}),
        value=1.0 if passed else 0.0, passed=passed, reason=reason, experiment=trace.experiment, case=trace.case,
    )  # fmt: skip


@pytest.fixture
def labelled(actors):
    # One-second calls: a request can judge the ten runs (30 s // 1 s), so the gate answers in the request.
    judge_configure(
        project=actors.acme, endpoint="http://127.0.0.1:9/v1", model="m", timeout_seconds=1,
        criteria={"helpful": QUESTION},
    )  # fmt: skip
    config = label_config_get(project=actors.acme, name="helpful")
    dataset = Dataset.objects.create(project=actors.acme, name="desk")
    for i, (human, judged) in enumerate(PAIRS):
        GoldenCase.objects.create(dataset=dataset, name=f"c{i}", expectations={"scorers": ["helpful"]})
        trace = trace_create(actors.acme, f"r{i}", experiment="v1", dataset="desk", case=f"c{i}")
        label_write(project=actors.acme, trace=trace, config=config, value=human, author={"name": "ana", "by": "user"})
        _judge_score(trace, judged)
    # A tie between two reviewers is no verdict; a label with no judge score is no pair.
    tie = trace_create(actors.acme, "tie")
    _judge_score(tie, True)
    for author, value in (("ana", True), ("bo", False)):
        label_write(project=actors.acme, trace=tie, config=config, value=value, author={"name": author, "by": "user"})
    lonely = trace_create(actors.acme, "lonely")
    label_write(project=actors.acme, trace=lonely, config=config, value=True, author={"name": "ana", "by": "user"})
    return config


def test_the_agreement_matches_hand_computed_figures(actors, labelled):
    found = agreement(project=actors.acme, criterion="helpful")
    assert (found.n, found.accuracy) == (10, 0.7)
    assert found.confusion == {
        "human_pass": {"judge_pass": 4, "judge_fail": 1},
        "human_fail": {"judge_pass": 2, "judge_fail": 3},
    }
    # p_o = 0.7; p_e = (5 x 6 + 5 x 4) / 100 = 0.5; kappa = (0.7 - 0.5) / (1 - 0.5) = 0.4
    assert found.kappa == pytest.approx(0.4)


@pytest.mark.parametrize(
    ("matrix", "kappa"),
    [
        ((20, 5, 10, 15), 0.4),
        ((45, 15, 25, 15), 0.1304),
        ((10, 0, 0, 10), 1.0),
        ((0, 10, 10, 0), -1.0),
        ((7, 0, 0, 0), None),
    ],
)
def test_cohens_kappa_against_worked_examples(matrix, kappa):
    found = cohens_kappa(*matrix)
    assert found == (None if kappa is None else pytest.approx(kappa, abs=1e-4))


def test_the_figures_follow_a_rescored_judge_and_an_edited_label(actors, labelled):
    missed = Trace.objects.get(trace_id="r4")  # reviewers pass, judge failed
    Score.objects.filter(trace=missed, scorer="helpful").delete()
    _judge_score(missed, True, "re-scored")
    rescored = agreement(project=actors.acme, criterion="helpful")
    assert rescored.confusion["human_pass"] == {"judge_pass": 5, "judge_fail": 0}
    assert rescored.kappa == pytest.approx((0.8 - 0.5) / 0.5)
    label_write(
        project=actors.acme,
        trace=Trace.objects.get(trace_id="r5"),
        config=labelled,
        value=True,
        author={"name": "ana", "by": "user"},
    )
    edited = agreement(project=actors.acme, criterion="helpful")
    assert edited.confusion == {
        "human_pass": {"judge_pass": 6, "judge_fail": 0},
        "human_fail": {"judge_pass": 1, "judge_fail": 3},
    }


def test_the_api_lists_the_disagreements_with_the_judges_reason_and_the_labels(actors, labelled):
    body = actors.api().get("/v1/api/judge/criteria/helpful/agreement").json()
    assert (body["n"], round(body["kappa"], 4)) == (10, 0.4)
    assert sorted(d["trace_id"] for d in body["disagreements"]) == ["r4", "r5", "r6"]
    one = next(d for d in body["disagreements"] if d["trace_id"] == "r4")
    assert (one["judge_passed"], one["judge_reason"], one["labels"][0]["author"]) == (False, "judged", "ana")
    assert actors.outsider_api().get("/v1/api/judge/criteria/helpful/agreement").status_code == 404


def test_an_uncalibrated_criterion_advises_and_a_calibrated_one_gates(actors, labelled):
    dataset = Dataset.objects.get(name="desk")
    GatePolicy.objects.create(dataset=dataset, judge_min_kappa=0.6, judge_min_labels=5)
    answer = actors.api().post("/v1/api/gate", {"dataset": "desk", "experiment": "v1"}, format="json").json()
    assert answer["advisory"] == ["helpful: advisory, kappa 0.40 on 10 labels (needs 0.60 on 5)"]
    # Nothing else gates these cases: with the judge advisory, no check applies to them.
    assert (answer["verdict"], answer["passed_cases"], answer["unmeasured_cases"]) == ("FAIL", 0, 10)
    assert all(c["checks"] == [] and c["advisory_checks"][0]["scorer"] == "helpful" for c in answer["cases"])
    assert all(c["reasons"] == ["no check applies to this case"] for c in answer["cases"])
    GatePolicy.objects.filter(dataset=dataset).update(judge_min_kappa=0.3)
    gated = actors.api().post("/v1/api/gate", {"dataset": "desk", "experiment": "v1"}, format="json").json()
    assert gated["advisory"] == []
    assert gated["passed_cases"] == 6  # the judge passed 6 of the 10 runs
    GatePolicy.objects.filter(dataset=dataset).update(judge_min_kappa=0.3, judge_min_labels=50)
    few = actors.api().post("/v1/api/gate", {"dataset": "desk", "experiment": "v1"}, format="json").json()
    assert few["advisory"] == ["helpful: advisory, kappa 0.40 on 10 labels (needs 0.30 on 50)"]


def test_a_new_judge_model_or_question_starts_the_calibration_again(actors, labelled):
    assert agreement(project=actors.acme, criterion="helpful").n == 10
    judge_configure(project=actors.acme, endpoint="http://127.0.0.1:9/v1", model="always-yes")
    switched = agreement(project=actors.acme, criterion="helpful")
    assert (switched.n, switched.kappa) == (0, None)
    judge_configure(
        project=actors.acme, endpoint="http://127.0.0.1:9/v1", model="m", criteria={"helpful": "Is it polite?"}
    )
    assert agreement(project=actors.acme, criterion="helpful").n == 0
    judge_configure(project=actors.acme, endpoint="http://127.0.0.1:9/v1", model="m", criteria={"helpful": QUESTION})
    assert agreement(project=actors.acme, criterion="helpful").n == 10


def test_the_gate_says_why_a_switched_judge_only_advises(actors, labelled):
    GatePolicy.objects.create(dataset=Dataset.objects.get(name="desk"), judge_min_kappa=0.3, judge_min_labels=5)
    judge_configure(project=actors.acme, endpoint="http://127.0.0.1:9/v1", model="always-yes", timeout_seconds=1)
    # Every stored judge score is the old model's: the new one has agreed with nobody yet.
    answer = actors.api().post("/v1/api/gate", {"dataset": "desk", "experiment": "v1"}, format="json").json()
    assert answer["advisory"][0].startswith("helpful: advisory, kappa n/a on 0 labels (needs 0.30 on 5)")
    assert "starts again with each judge model and question" in answer["advisory"][0]
