"""Scoring pages: the passes list, a pass with its progress, and the review queue of abstentions."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from scoring.models import Abstention, ScoringChunk, ScoringPass
from scoring.passes.immediate import score_now
from scoring.passes.services import chunk_score, pass_plan, pass_start
from tests.factories import trace_create


def _login(client, user):
    client.force_login(user)
    return client


@pytest.fixture
def scored(actors):
    for i in range(3):
        trace_create(actors.acme, f"run-{i}")
    score_now(project=actors.acme, data={"scorers": ["answered", "exact_match"]})
    return Abstention.objects.filter(project=actors.acme)


@pytest.fixture
def running_pass(actors, scored):
    scoring_pass = pass_start(project=actors.acme, data={"scorers": ["no_errors"]}, chunk_runs=2)
    pass_plan(pass_id=scoring_pass.pk)
    chunk_score(chunk_id=ScoringChunk.objects.filter(scoring_pass=scoring_pass).first().pk, token="t")
    scoring_pass.refresh_from_db()
    return scoring_pass


def test_a_running_pass_page_shows_its_numbers_and_refreshes_without_javascript(client, actors, running_pass):
    page = _login(client, actors.victor).get(f"/p/acme/passes/{running_pass.pk}/")
    assert page.status_code == 200
    html = page.content.decode()
    assert '<progress id="pass-bar" max="3" value="2">67%</progress>' in html
    assert 'data-field="done">2</span> of <span data-field="total">3</span>' in html
    assert '<noscript><meta http-equiv="refresh" content="5"></noscript>' in html
    assert "scoring/pass-progress.js" in html
    assert f'data-progress-url="/p/acme/passes/{running_pass.pk}/progress.json"' in html


def test_a_finished_pass_page_lists_its_skips_and_stops_refreshing(client, actors, scored):
    scoring_pass = ScoringPass.objects.get(background=False)
    html = _login(client, actors.victor).get(f"/p/acme/passes/{scoring_pass.pk}/").content.decode()
    assert "http-equiv" not in html
    assert "no_expected_output" in html
    assert 'href="/p/acme/runs/run-0/"' in html


def test_the_progress_json_gives_the_bars_numbers(client, actors, running_pass):
    body = _login(client, actors.victor).get(f"/p/acme/passes/{running_pass.pk}/progress.json").json()
    assert body == {
        "status": "running",
        "finished": False,
        "total": 3,
        "done": 2,
        "progress": 0.6667,
        "percent": 67,
        "written": 2,
        "skipped": 0,
        "existing": 0,
        "error": "",
    }


def test_the_passes_list_shows_each_pass_with_its_progress(client, actors, running_pass):
    html = _login(client, actors.victor).get("/p/acme/passes/").content.decode()
    assert f'href="/p/acme/passes/{running_pass.pk}/"' in html
    assert 'max="3" value="2"' in html


def test_an_outsider_gets_404_for_passes_and_the_review_queue(client, actors, running_pass):
    client = _login(client, actors.charlie)
    assert client.get(f"/p/acme/passes/{running_pass.pk}/").status_code == 404
    assert client.get(f"/p/acme/passes/{running_pass.pk}/progress.json").status_code == 404
    assert client.get("/p/acme/passes/").status_code == 404
    assert client.get("/p/acme/review/scores/").status_code == 404


def test_another_projects_pass_is_not_found_under_this_project(client, actors, running_pass):
    trace_create(actors.umbrella, "u")
    theirs = score_now(project=actors.umbrella, data={"scorers": ["answered"]}).scoring_pass
    assert _login(client, actors.alice).get(f"/p/acme/passes/{theirs.pk}/").status_code == 404


def test_pages_need_a_login(client, running_pass):
    response = client.get(f"/p/acme/passes/{running_pass.pk}/")
    assert response.status_code == 302
    assert response["Location"].startswith("/login/")


def test_the_review_queue_lists_abstentions_and_filters_them(client, actors, scored):
    client = _login(client, actors.victor)
    html = client.get("/p/acme/review/scores/").content.decode()
    assert html.count('href="/p/acme/runs/run-') == 3
    assert "no_expected_output" in html
    # A viewer reads; only reviewers get the checkboxes.
    assert 'name="ids"' not in html
    assert client.get("/p/acme/review/scores/?scorer=answered").content.decode().count("/p/acme/runs/run-") == 0
    assert (
        client.get("/p/acme/review/scores/?reason=no_expected_output").content.decode().count("/p/acme/runs/run-") == 3
    )


def test_a_reviewer_re_scores_selected_runs_and_lands_on_the_new_pass(client, actors, scored):
    client = _login(client, actors.bob)
    chosen = list(scored.values_list("pk", flat=True)[:2])
    response = client.post("/p/acme/review/scores/", {"ids": chosen, "action": "rescore"})
    rescore = ScoringPass.objects.filter(background=True).get()
    assert response.status_code == 302
    assert response["Location"] == f"/p/acme/passes/{rescore.pk}/"
    assert rescore.scorers == ["exact_match"]
    assert len(rescore.selection["trace_ids"]) == 2
    assert rescore.requested_by == actors.bob


def test_a_reviewer_marks_abstentions_reviewed(client, actors, scored):
    client = _login(client, actors.bob)
    chosen = scored.first()
    client.post("/p/acme/review/scores/", {"ids": [chosen.pk], "action": "reviewed"})
    chosen.refresh_from_db()
    assert chosen.reviewed_by == actors.bob and chosen.reviewed_at is not None


def test_a_viewer_cannot_re_score(client, actors, scored):
    response = _login(client, actors.victor).post(
        "/p/acme/review/scores/", {"ids": [scored.first().pk], "action": "rescore"}
    )
    assert response.status_code == 403
    assert not ScoringPass.objects.filter(background=True).exists()


def test_another_projects_abstentions_cannot_be_acted_on(client, actors, scored):
    trace_create(actors.umbrella, "u")
    score_now(project=actors.umbrella, data={"scorers": ["exact_match"]})
    theirs = Abstention.objects.get(project=actors.umbrella)
    _login(client, actors.alice).post("/p/acme/review/scores/", {"ids": [theirs.pk], "action": "reviewed"})
    theirs.refresh_from_db()
    assert theirs.reviewed_at is None


def test_the_review_queue_reads_a_fixed_number_of_queries_however_many_rows(client, actors, scored):
    client = _login(client, actors.bob)
    client.get("/p/acme/review/scores/")  # the session and the current project are stored once
    with CaptureQueriesContext(connection) as few:
        client.get("/p/acme/review/scores/")
    for i in range(3, 30):
        trace_create(actors.acme, f"run-{i}")
    score_now(project=actors.acme, data={"scorers": ["exact_match"]})
    with CaptureQueriesContext(connection) as many:
        html = client.get("/p/acme/review/scores/").content.decode()
    assert html.count('name="ids"') == 33  # 3 from the first request, 30 from the second
    assert len(many.captured_queries) == len(few.captured_queries)
