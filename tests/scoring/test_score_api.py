"""POST /v1/api/score: score stored runs in the request, write each score once, report every skip."""

import pytest
from django.test import override_settings

from datasets.models import Dataset, Experiment, GoldenCase, Trace
from evalsite.models import QuotaWindow
from scoring.models import Abstention, AbstentionKind, Score, ScoreConfig, ScoringPass
from tests.factories import trace_create


def _score(actors, body, key=None):
    return actors.api(key).post("/v1/api/score", body, format="json")


def _case(project, name, **fields):
    dataset, _ = Dataset.objects.get_or_create(project=project, name="reservo")
    return GoldenCase.objects.create(dataset=dataset, name=name, **fields)


@pytest.fixture
def runs(actors):
    return [
        trace_create(actors.acme, f"run-{i}", started_at=f"2026-11-30T10:0{i}:00Z", latency_ms=1000 + 100 * i)
        for i in range(4)
    ]


def test_it_writes_the_scores_and_reports_abstentions_separately(actors, runs):
    response = _score(actors, {"scorers": ["answered", "exact_match"], "trace_ids": ["run-0", "run-1"]})
    assert response.status_code == 200
    body = response.json()
    assert body["dry_run"] is False
    assert {(s["trace_id"], s["scorer"]) for s in body["scores"]} == {("run-0", "answered"), ("run-1", "answered")}
    score = body["scores"][0]
    assert score["value"] == 1.0 and score["passed"] is True and score["scorer_version"] == "1"
    assert score["reason"] and score["detail"] and len(score["config_hash"]) == 64
    # exact_match has no expected answer: it abstains, it is not a zero.
    assert [(s["trace_id"], s["scorer"], s["kind"], s["reason"]) for s in body["skipped"]] == [
        ("run-0", "exact_match", "abstained", "no_expected_output"),
        ("run-1", "exact_match", "abstained", "no_expected_output"),
    ]
    assert "expected" in body["skipped"][0]["detail"]["message"]
    assert Score.objects.filter(trace__project=actors.acme).count() == 2
    abstentions = Abstention.objects.filter(project=actors.acme)
    assert abstentions.count() == 2
    assert {a.scoring_pass_id for a in abstentions} == {body["pass_id"]}
    scoring_pass = ScoringPass.objects.get(pk=body["pass_id"])
    assert (scoring_pass.status, scoring_pass.background, scoring_pass.total) == ("done", False, 2)
    assert (scoring_pass.written, scoring_pass.skipped) == (2, 2)


def test_each_score_shows_its_config_stored_once_per_project(actors, runs):
    body = {"scorers": ["answered", "latency_budget"], "config": {"latency_budget": {"ms": 1150}}}
    assert _score(actors, body).status_code == 200
    shown = actors.api().get("/v1/api/traces/run-0").json()["scores"]
    assert [(s["scorer"], s["config"]) for s in shown] == [("answered", {}), ("latency_budget", {"ms": 1150})]
    # Four runs, two configs: each stored once.
    assert ScoreConfig.objects.filter(project=actors.acme).count() == 2
    assert Score.objects.filter(project=actors.acme).count() == 8


def test_running_the_same_request_again_writes_nothing_new(actors, runs):
    body = {"scorers": ["answered", "latency_budget"], "config": {"latency_budget": {"ms": 1150}}}
    first = _score(actors, body).json()
    assert len(first["scores"]) == 8
    second = _score(actors, body).json()
    assert second["scores"] == []
    assert second["existing"] == 8
    assert Score.objects.filter(trace__project=actors.acme).count() == 8


def test_a_dry_run_computes_and_writes_nothing(actors, runs):
    body = _score(actors, {"scorers": ["answered", "exact_match"], "dry_run": True}).json()
    assert body["dry_run"] is True
    assert len(body["scores"]) == 4
    assert len(body["skipped"]) == 4
    assert body["pass_id"] is None
    assert not Score.objects.exists()
    assert not Abstention.objects.exists()
    assert not ScoringPass.objects.exists()


def test_scores_carry_the_runs_experiment_and_case(actors):
    case = _case(actors.acme, "quote", expected_output="Focus pro 3h cuesta 75,00 €.")
    trace_create(actors.acme, "linked", experiment="v2", dataset="reservo", case="quote")
    body = _score(actors, {"scorers": ["exact_match"], "trace_ids": ["linked"]}).json()
    assert body["scores"][0]["experiment"] == "v2"
    assert body["scores"][0]["case"] == case.pk
    assert body["scores"][0]["passed"] is True
    score = Score.objects.get()
    assert score.experiment.name == "v2"
    assert score.case_id == case.pk


# --- selection ------------------------------------------------------------------------


def test_trace_ids_select_exactly_those_runs(actors, runs):
    body = _score(actors, {"scorers": ["answered"], "trace_ids": ["run-2", "run-0", "run-2"]}).json()
    assert [s["trace_id"] for s in body["scores"]] == ["run-2", "run-0"]


def test_without_trace_ids_it_takes_the_most_recent_runs_newest_first(actors, runs):
    body = _score(actors, {"scorers": ["answered"], "limit": 2}).json()
    assert [s["trace_id"] for s in body["scores"]] == ["run-3", "run-2"]


def test_from_keeps_runs_started_at_or_after_it(actors, runs):
    body = _score(actors, {"scorers": ["answered"], "from": "2026-11-30T10:01:00Z"}).json()
    assert [s["trace_id"] for s in body["scores"]] == ["run-3", "run-2", "run-1"]


def test_experiment_narrows_the_recent_runs(actors, runs):
    trace_create(actors.acme, "v2-a", experiment="v2", started_at="2026-11-30T09:00:00Z")
    body = _score(actors, {"scorers": ["answered"], "experiment": "v2"}).json()
    assert [s["trace_id"] for s in body["scores"]] == ["v2-a"]


def test_with_limit_omitted_it_scores_as_many_recent_runs_as_the_cap_allows(actors, runs, monkeypatch):
    monkeypatch.setattr("scoring.selection.requests.SYNC_MAX_RUNS", 3)
    body = _score(actors, {"scorers": ["answered"]}).json()
    assert body["runs"] == 3


def test_it_refuses_more_runs_than_the_synchronous_cap_and_points_to_passes(actors, runs, monkeypatch):
    monkeypatch.setattr("scoring.selection.requests.SYNC_MAX_RUNS", 3)
    for body, field in (
        ({"scorers": ["answered"], "limit": 4}, "limit"),
        ({"scorers": ["answered"], "trace_ids": ["run-0", "run-1", "run-2", "run-3"]}, "trace_ids"),
    ):
        response = _score(actors, body)
        assert response.status_code == 400
        error = response.json()["errors"][0]
        assert error["field"] == field
        assert "at most 3 runs" in error["message"] and "/v1/api/passes" in error["message"]
    assert not Score.objects.exists()


def test_unknown_trace_ids_are_a_400_naming_them(actors, runs):
    response = _score(actors, {"scorers": ["answered"], "trace_ids": ["run-0", "nope"]})
    assert response.status_code == 400
    assert response.json()["errors"] == [
        {"field": "trace_ids[1]", "message": "no run with trace_id 'nope' in this project"}
    ]
    assert not Score.objects.exists()


def test_another_projects_runs_are_unknown_to_an_outsider(actors, runs):
    response = _score(actors, {"scorers": ["answered"], "trace_ids": ["run-0"]}, key=actors.umbrella_key)
    assert response.status_code == 400
    assert "no run with trace_id 'run-0'" in response.json()["errors"][0]["message"]
    assert not Score.objects.exists()


def test_an_unknown_experiment_is_a_400(actors, runs):
    response = _score(actors, {"scorers": ["answered"], "experiment": "v9"})
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "experiment"


def test_trace_ids_cannot_be_combined_with_limit(actors, runs):
    response = _score(actors, {"scorers": ["answered"], "trace_ids": ["run-0"], "limit": 1})
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "limit"


def test_an_unknown_field_is_a_400(actors, runs):
    response = _score(actors, {"scorers": ["answered"], "traceids": ["run-0"]})
    assert response.status_code == 400
    assert response.json()["errors"] == [{"field": "traceids", "message": "unknown field"}]


# --- scorers and config ---------------------------------------------------------------


def test_an_unknown_scorer_is_a_400_listing_the_known_ones(actors, runs):
    response = _score(actors, {"scorers": ["answered", "relevance"]})
    assert response.status_code == 400
    error = response.json()["errors"][0]
    assert error["field"] == "scorers[1]"
    assert "Unknown scorer: relevance." in error["message"]
    assert "answered" in error["message"] and "tool_output_schema" in error["message"]


def test_invalid_config_is_a_400_naming_scorer_and_field(actors, runs):
    response = _score(actors, {"scorers": ["latency_budget"], "config": {"latency_budget": {"ms": -1}}})
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "config.latency_budget.ms"


def test_config_for_a_scorer_not_named_is_a_400(actors, runs):
    response = _score(actors, {"scorers": ["answered"], "config": {"latency_budget": {"ms": 5}}})
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "config.latency_budget"


def test_a_scorer_that_needs_config_and_got_none_is_a_400_naming_it(actors, runs):
    response = _score(actors, {"scorers": ["answered", "latency_budget", "tool_choice"]})
    assert response.status_code == 400
    body = response.json()
    assert "latency_budget, tool_choice need config" in body["detail"]
    assert [e["field"] for e in body["errors"]] == ["config.latency_budget", "config.tool_choice"]
    assert not Score.objects.exists()


def test_runs_linked_to_cases_take_their_config_from_the_case_and_abstain_without_it(actors):
    _case(actors.acme, "with-tools", expectations={"expected_tools": ["quote_room"]})
    _case(actors.acme, "without")
    trace_create(actors.acme, "a", dataset="reservo", case="with-tools")
    trace_create(actors.acme, "b", dataset="reservo", case="without")
    trace_create(actors.acme, "c")
    body = _score(actors, {"scorers": ["tool_choice"]}).json()
    assert [(s["trace_id"], s["passed"]) for s in body["scores"]] == [("a", True)]
    assert sorted((s["trace_id"], s["reason"]) for s in body["skipped"]) == [
        ("b", "not_configured"),
        ("c", "not_configured"),
    ]


def test_the_linked_cases_expectation_wins_over_the_request(actors):
    _case(actors.acme, "slow-ok", expectations={"latency_threshold_ms": 5000})
    trace_create(actors.acme, "a", dataset="reservo", case="slow-ok", latency_ms=1200)
    trace_create(actors.acme, "b", latency_ms=1200)
    body = _score(actors, {"scorers": ["latency_budget"], "config": {"latency_budget": {"ms": 500}}}).json()
    assert sorted((s["trace_id"], s["passed"], s["detail"]["budget_ms"]) for s in body["scores"]) == [
        ("a", True, 5000),
        ("b", False, 500),
    ]


def test_a_scorer_that_needs_an_expected_answer_and_has_none_abstains(actors, runs):
    body = _score(actors, {"scorers": ["exact_match"], "trace_ids": ["run-0"]}).json()
    assert body["scores"] == []
    assert body["skipped"][0]["reason"] == "no_expected_output"


# --- quota, stale scores, deadline ----------------------------------------------------


def test_scores_over_the_quota_are_not_written_and_are_skipped_with_reason_quota(actors, runs):
    actors.acme.quota_per_minute = 5
    actors.acme.save()
    body = _score(actors, {"scorers": ["answered", "no_errors"]}).json()
    assert len(body["scores"]) == 5
    quota = [s for s in body["skipped"] if s["reason"] == "quota"]
    assert len(quota) == 3
    assert quota[0]["kind"] == "skipped"
    assert "quota of 5" in quota[0]["detail"]["message"]
    assert Score.objects.count() == 5
    assert Abstention.objects.filter(kind=AbstentionKind.SKIPPED, reason="quota").count() == 3
    assert sum(QuotaWindow.objects.values_list("used", flat=True)) == 5


def test_a_stale_score_is_recomputed_and_replaced_never_duplicated(actors, runs):
    _score(actors, {"scorers": ["answered"], "trace_ids": ["run-0"]})
    old = Score.objects.get()
    Score.objects.filter(pk=old.pk).update(value=0.0, passed=False)
    Trace.objects.filter(trace_id="run-0").update(revision=2)  # the run changed since
    body = _score(actors, {"scorers": ["answered"], "trace_ids": ["run-0"]}).json()
    assert len(body["scores"]) == 1
    new = Score.objects.get()
    assert new.pk != old.pk
    assert (new.run_revision, new.value, new.passed) == (2, 1.0, True)
    assert new.scoring_pass_id == body["pass_id"]


@override_settings(EVALSITE_REQUEST_TIMEOUT_SECONDS=0)
def test_runs_not_reached_before_the_deadline_are_skipped_with_reason_deadline(actors, runs):
    body = _score(actors, {"scorers": ["answered"], "trace_ids": ["run-0"]}).json()
    assert body["scores"] == []
    assert body["skipped"][0]["reason"] == "deadline"
    assert body["skipped"][0]["kind"] == "skipped"
    assert not Score.objects.exists()


def test_a_deleted_run_takes_its_scores_and_abstentions_and_a_deleted_experiment_leaves_them(actors):
    trace_create(actors.acme, "gone", experiment="v1")
    trace_create(actors.acme, "kept", experiment="v1")
    _score(actors, {"scorers": ["answered", "exact_match"]})
    Trace.objects.get(trace_id="gone").delete()
    assert list(Score.objects.values_list("trace__trace_id", flat=True)) == ["kept"]
    assert list(Abstention.objects.values_list("trace__trace_id", flat=True)) == ["kept"]
    Experiment.objects.get(name="v1").delete()
    assert Score.objects.get().experiment_id is None
    assert Abstention.objects.get().experiment_id is None
