"""The admin lists abstentions and skips with filters, and re-scores the selected runs."""

import pytest
from django.contrib.auth import get_user_model

from scoring.models import Abstention, JudgeConfig, LabelConfig, PassStatus, Score, ScoringChunk, ScoringPass
from scoring.passes.immediate import score_now
from scoring.passes.services import chunk_score, pass_plan
from tests.base import PASSWORD
from tests.factories import trace_create


@pytest.fixture
def admin_client(client, db):
    client.force_login(get_user_model().objects.create_superuser("root", password=PASSWORD))
    return client


@pytest.fixture
def skips(actors):
    for i in range(3):
        trace_create(actors.acme, f"run-{i}")
    trace_create(actors.umbrella, "theirs")
    actors.acme.quota_per_minute = 2
    actors.acme.save()
    score_now(project=actors.acme, data={"scorers": ["answered", "exact_match"]})
    score_now(project=actors.umbrella, data={"scorers": ["exact_match"]})
    return Abstention.objects.all()


def test_it_lists_abstentions_and_skips_with_their_reason_and_message(admin_client, skips):
    response = admin_client.get("/admin/scoring/abstention/")
    assert response.status_code == 200
    page = response.content.decode()
    assert "no_expected_output" in page and "quota" in page
    assert "over the project&#x27;s quota of 2" in page


@pytest.mark.parametrize(
    "query, expected",
    [
        ("scorer=exact_match", 4),
        ("reason__exact=quota", 1),
        ("kind__exact=skipped", 1),
        ("created_at__gte=2000-01-01+00:00:00%2B00:00", 5),
    ],
)
def test_it_filters_by_scorer_reason_kind_and_date(admin_client, skips, query, expected):
    response = admin_client.get(f"/admin/scoring/abstention/?{query}")
    assert response.status_code == 200
    assert len(response.context["cl"].result_list) == expected


def test_it_filters_by_project(admin_client, skips, actors):
    response = admin_client.get(f"/admin/scoring/abstention/?project__id__exact={actors.umbrella.pk}")
    assert [a.trace.trace_id for a in response.context["cl"].result_list] == ["theirs"]


def test_the_rescore_action_starts_a_pass_over_the_selected_runs_and_scorers(admin_client, skips, actors):
    quota_skip = Abstention.objects.get(reason="quota")
    actors.acme.quota_per_minute = 0
    actors.acme.save()
    response = admin_client.post(
        "/admin/scoring/abstention/",
        {"action": "rescore_selected_runs", "_selected_action": [quota_skip.pk]},
        follow=True,
    )
    assert response.status_code == 200
    rescore = ScoringPass.objects.filter(background=True).get()
    assert "Started" in response.content.decode()
    assert rescore.scorers == [quota_skip.scorer]
    assert rescore.selection == {"trace_ids": [quota_skip.trace.trace_id]}
    assert rescore.requested_by.username == "root"
    pass_plan(pass_id=rescore.pk)
    chunk_score(chunk_id=ScoringChunk.objects.get(scoring_pass=rescore).pk, token="t")
    rescore.refresh_from_db()
    assert (rescore.status, rescore.written) == (PassStatus.DONE, 1)
    assert Score.objects.filter(trace=quota_skip.trace, scorer=quota_skip.scorer).exists()


def test_the_mark_reviewed_action_records_who_and_when(admin_client, skips):
    ids = list(skips.values_list("pk", flat=True)[:2])
    admin_client.post("/admin/scoring/abstention/", {"action": "mark_reviewed", "_selected_action": ids})
    reviewed = Abstention.objects.filter(reviewed_at__isnull=False)
    assert sorted(reviewed.values_list("pk", flat=True)) == sorted(ids)
    assert {a.reviewed_by.username for a in reviewed} == {"root"}


def test_the_pass_and_score_pages_open(admin_client, skips):
    scoring_pass = ScoringPass.objects.first()
    assert admin_client.get(f"/admin/scoring/scoringpass/{scoring_pass.pk}/change/").status_code == 200
    assert admin_client.get("/admin/scoring/scoringpass/").status_code == 200
    assert admin_client.get("/admin/scoring/score/?scorer=answered").status_code == 200


def test_the_score_filter_offers_judge_criteria_and_labels(admin_client, actors):
    JudgeConfig.objects.create(
        project=actors.acme, endpoint="http://x/v1", model="m", criteria={"judge:polite": "Is it polite?"}
    )
    LabelConfig.objects.create(project=actors.acme, name="helpful", kind="boolean")
    page = admin_client.get("/admin/scoring/score/").content.decode()
    assert "?scorer=judge%3Apolite" in page and "?scorer=label%3Ahelpful" in page
    assert "?scorer=exact_match" in page
