"""POST /v1/api/passes and GET /v1/api/passes/{id}: a pass run in chunks, its status and skips.

The worker steps (plan, chunks) are called here as the tasks call them; a real worker
runs them in test_passes_worker.py.
"""

import pytest

from scoring.models import Abstention, Score, ScoringChunk, ScoringPass
from scoring.passes.services import chunk_score, pass_plan
from tests.factories import trace_create


def _start(actors, body, key=None):
    return actors.api(key).post("/v1/api/passes", body, format="json")


def _work(pass_id):
    """Do what the workers do: plan the pass, then score each chunk."""
    pass_plan(pass_id=pass_id)
    for chunk in ScoringChunk.objects.filter(scoring_pass_id=pass_id).order_by("ordinal"):
        chunk_score(chunk_id=chunk.pk, token=f"task-{chunk.pk}")


@pytest.fixture
def runs(actors):
    return [trace_create(actors.acme, f"run-{i}", started_at=f"2026-11-30T10:{i:02d}:00Z") for i in range(7)]


def test_it_answers_202_with_the_queued_pass_and_where_to_follow_it(actors, runs):
    response = _start(actors, {"scorers": ["answered", "exact_match"]})
    assert response.status_code == 202
    body = response.json()
    assert body["status"] == "queued"
    assert body["url"] == f"/v1/api/passes/{body['id']}"
    assert response["Location"] == body["url"]
    assert (body["total"], body["done"], body["written"], body["skipped"]) == (0, 0, 0, 0)
    assert body["selection"]["limit"] == 1000
    assert "until" in body["selection"]
    assert not Score.objects.exists()


def test_a_pass_splits_into_chunks_and_reports_progress_until_done(actors, runs, settings):
    settings.EVALSITE_PASS_CHUNK_RUNS = 3
    pass_id = _start(actors, {"scorers": ["answered", "exact_match"]}).json()["id"]
    pass_plan(pass_id=pass_id)
    chunks = list(ScoringChunk.objects.filter(scoring_pass_id=pass_id).order_by("ordinal"))
    assert [c.runs for c in chunks] == [3, 3, 1]
    # Newest first, as the selection rules say.
    assert Score.objects.count() == 0
    detail = actors.api().get(f"/v1/api/passes/{pass_id}").json()
    assert (detail["status"], detail["total"], detail["done"], detail["progress"]) == ("running", 7, 0, 0.0)

    chunk_score(chunk_id=chunks[0].pk, token="t0")
    detail = actors.api().get(f"/v1/api/passes/{pass_id}").json()
    assert (detail["status"], detail["done"], detail["written"], detail["skipped"]) == ("running", 3, 3, 3)
    assert detail["progress"] == pytest.approx(3 / 7, abs=1e-4)

    for chunk in chunks[1:]:
        chunk_score(chunk_id=chunk.pk, token=f"t{chunk.ordinal}")
    detail = actors.api().get(f"/v1/api/passes/{pass_id}").json()
    assert (detail["status"], detail["done"], detail["written"], detail["skipped"]) == ("done", 7, 7, 7)
    assert detail["progress"] == 1.0
    assert detail["finished_at"] is not None
    assert detail["skips_by_reason"] == {"no_expected_output": 7}
    assert {s["trace_id"] for s in detail["skips"]} == {f"run-{i}" for i in range(7)}
    assert set(detail["skips"][0]) == {"trace_id", "scorer", "config_hash", "kind", "reason", "detail"}
    assert ScoringChunk.objects.get(pk=chunks[0].pk).trace_pks == [r.pk for r in reversed(runs)][:3]


def test_the_skips_are_listed_in_pages(actors, runs, monkeypatch):
    monkeypatch.setattr("scoring.selectors.PASS_SKIPS_PAGE", 4)
    pass_id = _start(actors, {"scorers": ["exact_match"]}).json()["id"]
    _work(pass_id)
    first = actors.api().get(f"/v1/api/passes/{pass_id}").json()
    assert len(first["skips"]) == 4
    assert first["skips_next"].startswith(f"/v1/api/passes/{pass_id}?skips_after=")
    second = actors.api().get(first["skips_next"]).json()
    assert len(second["skips"]) == 3
    assert second["skips_next"] is None
    seen = [s["trace_id"] for s in first["skips"] + second["skips"]]
    assert sorted(seen) == sorted(f"run-{i}" for i in range(7))


def test_running_a_pass_again_writes_only_what_is_missing(actors, runs):
    first = _start(actors, {"scorers": ["answered"], "trace_ids": ["run-0", "run-1"]}).json()["id"]
    _work(first)
    second = _start(actors, {"scorers": ["answered"]}).json()["id"]
    _work(second)
    detail = actors.api().get(f"/v1/api/passes/{second}").json()
    assert (detail["written"], detail["existing"]) == (5, 2)
    assert Score.objects.count() == 7


def test_a_dry_run_pass_reports_what_it_would_write_and_writes_nothing(actors, runs):
    pass_id = _start(actors, {"scorers": ["answered", "exact_match"], "dry_run": True}).json()["id"]
    _work(pass_id)
    detail = actors.api().get(f"/v1/api/passes/{pass_id}").json()
    assert (detail["status"], detail["dry_run"], detail["written"], detail["skipped"]) == ("done", True, 7, 7)
    assert len(detail["scores"]) == 7
    assert detail["skips_by_reason"] == {"no_expected_output": 7}
    assert len(detail["skips"]) == 7
    assert not Score.objects.exists()
    assert not Abstention.objects.exists()


def test_an_empty_selection_is_a_pass_done_at_once(actors, runs):
    pass_id = _start(actors, {"scorers": ["answered"], "from": "2030-01-01T00:00:00Z"}).json()["id"]
    assert pass_plan(pass_id=pass_id) == 0
    detail = actors.api().get(f"/v1/api/passes/{pass_id}").json()
    assert (detail["status"], detail["total"], detail["progress"]) == ("done", 0, 1.0)


def test_runs_ingested_after_the_pass_was_asked_for_are_not_part_of_it(actors, runs):
    pass_id = _start(actors, {"scorers": ["answered"]}).json()["id"]
    trace_create(actors.acme, "late", started_at="2026-12-01T00:00:00Z")
    _work(pass_id)
    assert ScoringPass.objects.get(pk=pass_id).total == 7
    assert not Score.objects.filter(trace__trace_id="late").exists()


def test_a_pass_request_is_checked_like_a_score_request(actors, runs):
    response = _start(actors, {"scorers": ["latency_budget"]})
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "config.latency_budget"
    response = _start(actors, {"scorers": ["nope"]})
    assert response.status_code == 400
    assert not ScoringPass.objects.exists()


def test_a_pass_may_select_far_more_runs_than_a_synchronous_request(actors, runs):
    assert _start(actors, {"scorers": ["answered"], "limit": 50_000}).status_code == 202
    response = _start(actors, {"scorers": ["answered"], "limit": 1_000_001})
    assert response.status_code == 400
    assert "a pass scores at most 1000000 runs" in response.json()["errors"][0]["message"]


def test_an_outsider_gets_404_for_a_pass(actors, runs):
    pass_id = _start(actors, {"scorers": ["answered"]}).json()["id"]
    response = actors.outsider_api().get(f"/v1/api/passes/{pass_id}")
    assert response.status_code == 404
    assert response["Content-Type"] == "application/problem+json"
    assert actors.api().get("/v1/api/passes/999999").status_code == 404


def test_a_bad_skips_cursor_is_a_400(actors, runs):
    pass_id = _start(actors, {"scorers": ["answered"]}).json()["id"]
    response = actors.api().get(f"/v1/api/passes/{pass_id}?skips_after=x")
    assert response.status_code == 400
