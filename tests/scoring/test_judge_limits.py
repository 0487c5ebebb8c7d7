"""The deadline arithmetic, the worker limit and the names a pass may use."""

import time

import pytest
from django.conf import settings

from checks.judge import Judge, judge_run_cap, judge_score_config, judge_scorer_version
from checks.scorers import SCORERS
from evalsite.errors import Invalid
from scoring.judge.services import judge_configure
from scoring.selection.catalog import catalog_for, judge_deadline, judge_sync_cap
from scoring.selection.requests import score_request_read, unknown_scorer_message


@pytest.mark.parametrize(
    ("request_timeout", "timeout", "criteria", "cap"),
    [(30, 30, 1, 1), (30, 30, 2, 0), (30, 10, 1, 3), (30, 10, 2, 1), (300, 30, 2, 5), (29, 30, 1, 0), (600, 1, 1, 600)],
)
def test_it_caps_judged_runs_at_the_request_timeout_over_timeout_times_criteria(
    request_timeout, timeout, criteria, cap
):
    assert judge_run_cap(request_timeout, timeout, criteria) == cap


def test_it_refuses_to_compute_a_cap_without_a_criterion():
    with pytest.raises(ValueError):
        judge_run_cap(30, 30, 0)


def test_the_catalog_caps_a_synchronous_request_with_the_server_timeout(settings):
    settings.EVALSITE_REQUEST_TIMEOUT_SECONDS = 30
    judge = Judge(endpoint="http://x/v1", model="m", timeout_seconds=10)
    assert (judge_sync_cap(judge, 1), judge_sync_cap(judge, 2)) == (3, 1)


@pytest.mark.django_db
def test_it_rejects_a_request_over_the_cap_naming_it(actors, settings):
    settings.EVALSITE_REQUEST_TIMEOUT_SECONDS = 30
    judge_configure(
        project=actors.acme, endpoint="http://x/v1", model="m", timeout_seconds=10, criteria={"tone": "Polite?"}
    )
    request = score_request_read(project=actors.acme, data={"scorers": ["tone"], "limit": 3}, background=False)
    assert request.limit == 3
    with pytest.raises(Invalid) as exc:
        score_request_read(project=actors.acme, data={"scorers": ["tone"], "limit": 4}, background=False)
    assert "at most 3" in exc.value.detail
    assert exc.value.errors[0]["field"] == "limit"
    assert exc.value.extra == {"judge_run_cap": 3}


def test_it_gives_the_request_deadline_from_the_setting(settings):
    settings.EVALSITE_REQUEST_TIMEOUT_SECONDS = 45
    started = time.monotonic()
    assert judge_deadline(started) == started + 45


@pytest.mark.django_db
def test_it_bounds_worker_passes_by_their_own_setting(actors):
    assert settings.EVALSITE_JUDGE_PASS_MAX_RUNS == 10_000
    judge_configure(project=actors.acme, endpoint="http://x/v1", model="m", criteria={"tone": "Polite?"})
    with pytest.raises(Invalid) as exc:
        score_request_read(project=actors.acme, data={"scorers": ["tone"], "limit": 10_001}, background=True)
    assert "at most 10000" in exc.value.errors[0]["message"]


def test_a_judge_score_is_versioned_by_the_model_and_keyed_by_the_question():
    judge = Judge(endpoint="http://x/v1", model="qwen2.5:14b", criteria={"tone": "Polite?"})
    assert judge_scorer_version(judge) == "qwen2.5:14b"
    assert judge_score_config(judge, "tone") == {"question": "Polite?"}


@pytest.mark.django_db
def test_the_unknown_scorer_message_lists_built_ins_and_configured_criteria_together(actors):
    judge_configure(
        project=actors.acme, endpoint="http://localhost:11434/v1", model="m",
        criteria={"no_hedging": "Does it commit?", "answer_relevance": "Relevant?"},
    )  # fmt: skip
    catalog = catalog_for(actors.acme)
    message = unknown_scorer_message(catalog, ["relevancy"])
    assert message.startswith("Unknown scorer: relevancy.")
    for scorer_id in SCORERS:
        assert scorer_id in message
    assert "Configured judge criteria: answer_relevance, no_hedging." in message
    assert unknown_scorer_message(catalog, ["relevancy", "x"]).startswith("Unknown scorers: relevancy, x.")


@pytest.mark.django_db
def test_criteria_are_valid_scorer_ids_only_while_the_judge_is_on(actors):
    assert list(catalog_for(actors.acme).scorers) == list(SCORERS)
    judge_configure(project=actors.acme, endpoint="http://localhost:11434/v1", model="m", criteria={"tone": "Polite?"})
    assert list(catalog_for(actors.acme).scorers) == [*SCORERS, "tone"]
    assert catalog_for(actors.umbrella).criteria_ids == ()
    judge_configure(project=actors.acme, endpoint="", model="")
    assert catalog_for(actors.acme).criteria_ids == ()
    assert "Configured judge criteria: none" in unknown_scorer_message(catalog_for(actors.acme), ["tone"])
