"""Judge criteria named in POST /score, in worker passes and in a gate policy, against a real
OpenAI-compatible server on loopback: the caps, the stored scores, the abstentions, and a
worker killed midway keeping every judge score it finished."""

import json
import os
import time
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.db.models import Count
from django.test import Client

from checks.scorers import config_hash
from datasets.models import Dataset, GoldenCase
from scoring.models import Abstention, PassStatus, Score, ScoringPass
from scoring.passes.services import pass_start
from tests.factories import run_payload, trace_create
from tests.live import kill_worker, process_stop, wait_for, worker_start
from tests.scoring.judge_server import judge_server, says

QUESTION = "Does the answer address the question that was asked?"
TONE = "Is the answer polite?"


@pytest.fixture
def server():
    with judge_server() as s:
        yield s


def configure(project, server, *, timeout_seconds=5, max_concurrency=4):
    from scoring.judge.services import judge_configure

    return judge_configure(
        project=project,
        endpoint=server.url,
        model="judge-model",
        api_key="sk-judge-secret-0123456789",
        timeout_seconds=timeout_seconds,
        max_concurrency=max_concurrency,
        criteria={"relevance": QUESTION, "tone": TONE},
    )


def score(actors, **body):
    return actors.api().post("/v1/api/score", body, format="json")


def test_a_named_criterion_asks_once_per_run_and_stores_the_models_score(actors, server):
    configure(actors.acme, server)
    ids = [trace_create(actors.acme, f"judge-{i}").trace_id for i in range(3)]
    server.default = says('```json\n{"score": 0.8, "reason": "on topic"}\n```')

    body = score(actors, scorers=["relevance", "answered"], trace_ids=ids).json()

    judged = [s for s in body["scores"] if s["scorer"] == "relevance"]
    assert len(judged) == 3 and body["skipped"] == []
    assert {(s["value"], s["passed"], s["reason"], s["source"], s["scorer_version"]) for s in judged} == {
        (0.8, True, "on topic", "judge", "judge-model")
    }
    assert {s["config_hash"] for s in judged} == {config_hash({"question": QUESTION})}
    assert server.count == 3
    assert Score.objects.filter(scorer="relevance", source="judge").count() == 3
    # The prompt carries the question, the run's input and its answer.
    prompt = json.dumps(server.requests[0]["body"]["messages"], ensure_ascii=False)
    assert QUESTION in prompt and "Focus" in prompt
    assert server.requests[0]["body"]["temperature"] == 0

    again = score(actors, scorers=["relevance"], trace_ids=ids).json()
    assert (again["scores"], again["existing"], server.count) == ([], 3, 3)


def test_a_reply_in_prose_is_an_abstention_with_the_reply_quoted_never_a_score(actors, server):
    configure(actors.acme, server)
    run = trace_create(actors.acme, "judge-prose")
    server.default = says("The answer seems fine to me.")

    body = score(actors, scorers=["relevance"], trace_ids=[run.trace_id]).json()

    assert body["scores"] == []
    [skip] = body["skipped"]
    assert (skip["kind"], skip["reason"]) == ("abstained", "prose_reply")
    assert "seems fine" in json.dumps(skip["detail"])
    assert Abstention.objects.filter(trace=run, scorer="relevance", reason="prose_reply").count() == 1
    assert not Score.objects.filter(scorer="relevance").exists()


def test_the_cap_is_a_400_naming_it_before_any_model_is_called(actors, server, settings):
    settings.EVALSITE_REQUEST_TIMEOUT_SECONDS = 30
    configure(actors.acme, server, timeout_seconds=10)  # two criteria of 10 s: 30 // 20 = 1 run
    ids = [trace_create(actors.acme, f"cap-{i}", started_at=f"2026-11-30T10:0{i}:00Z").trace_id for i in range(3)]

    by_ids = score(actors, scorers=["relevance", "tone"], trace_ids=ids[:2])
    by_limit = score(actors, scorers=["relevance", "tone"], limit=2)

    for response, field in ((by_ids, "trace_ids"), (by_limit, "limit")):
        assert response.status_code == 400, response.content
        [error] = response.json()["errors"]
        assert error["field"] == field
        assert "at most 1" in error["message"] and "30 s // (judge timeout 10 s × 2 judge criteria)" in error["message"]
    assert server.count == 0
    assert not ScoringPass.objects.exists()

    # Without a limit, as many recent runs as fit: the newest one.
    body = score(actors, scorers=["relevance", "tone"]).json()
    assert body["runs"] == 1 and server.count == 2
    assert {s["trace_id"] for s in body["scores"]} == {ids[2]}


def test_an_unknown_scorer_lists_the_built_ins_and_the_configured_criteria(actors, server):
    configure(actors.acme, server)
    trace_create(actors.acme, "unknown-1")

    response = score(actors, scorers=["relevancy"])

    assert response.status_code == 400
    message = response.json()["errors"][0]["message"]
    assert "relevancy" in message and "answered" in message and "tool_choice" in message
    assert "relevance, tone" in message
    # The catalog lists the built-ins only.
    listed = [s["id"] for s in actors.api().get("/v1/api/scorers").json()["results"]]
    assert "relevance" not in listed and "answered" in listed


def test_config_for_a_criterion_is_a_400_naming_it(actors, server):
    configure(actors.acme, server)
    run = trace_create(actors.acme, "config-1")

    response = score(actors, scorers=["relevance"], trace_ids=[run.trace_id], config={"relevance": {"x": 1}})

    assert response.status_code == 400
    assert response.json()["errors"][0]["field"].startswith("config.relevance")
    assert server.count == 0


def test_the_api_key_never_comes_back_in_scores_or_skips(actors, server):
    configure(actors.acme, server)
    run = trace_create(actors.acme, "key-1")
    server.default = says("sk-judge-secret-0123456789 is what you sent me")

    response = score(actors, scorers=["relevance"], trace_ids=[run.trace_id])

    assert server.requests[0]["headers"]["Authorization"] == "Bearer sk-judge-secret-0123456789"
    assert "sk-judge-secret" not in response.content.decode()
    assert response.json()["skipped"][0]["reason"] == "prose_reply"


def test_a_gate_policy_can_gate_on_a_criterion(actors, server):
    configure(actors.acme, server)
    dataset = Dataset.objects.create(project=actors.acme, name="reservo")
    GoldenCase.objects.create(dataset=dataset, name="polite", input="q1", expectations={})
    GoldenCase.objects.create(dataset=dataset, name="rude", input="q2", expectations={})
    api = actors.api()
    # An uncalibrated criterion only advises by default; an admin lets it gate, saying why.
    policy = {"scorers": ["tone"], "judge_min_kappa": None, "reason": "tone is checked by hand this week"}
    assert api.put("/v1/api/datasets/reservo/gate-policy", policy, format="json").status_code == 200
    runs = [
        run_payload(f"v1-{name}", dataset="reservo", case=name, experiment="v1", output=answer)
        for name, answer in (("polite", "Con gusto: 75 EUR."), ("rude", "75. Next."))
    ]
    assert api.post("/v1/api/traces", {"traces": runs}, format="json").status_code == 201

    def verdict(record):
        rude = "Next." in json.dumps(record["body"]["messages"], ensure_ascii=False)
        return says('{"score": 0.1, "reason": "curt"}' if rude else '{"score": 0.9, "reason": "kind"}')

    server.choose = verdict

    answer = api.post("/v1/api/gate", {"dataset": "reservo", "experiment": "v1"}, format="json").json()

    assert (answer["verdict"], answer["passed_cases"], answer["total_cases"]) == ("FAIL", 1, 2)
    rude = next(c for c in answer["cases"] if c["name"] == "rude")
    assert rude["failed_checks"] == ["judge"]
    assert any(line.startswith("tone:") for line in rude["reasons"])
    assert server.count == 2
    # The gate run page shows what the judge said, on the failing case and the passing one.
    browser = Client()
    browser.force_login(actors.alice)
    page = browser.get(f"/p/acme/gate-runs/{answer['gate_run_id']}/?show=all").content.decode()
    assert "Judge: “curt”" in page and "Judge: “kind”" in page
    # Asked again, the stored judge scores are the evidence: no new call.
    api.post("/v1/api/gate", {"dataset": "reservo", "experiment": "v1"}, format="json")
    assert server.count == 2


@pytest.mark.worker
def test_a_worker_judges_concurrently_and_a_killed_one_keeps_its_finished_scores(transactional_db, actors, server):
    runs = 16
    configure(actors.acme, server, max_concurrency=4)
    for i in range(runs):
        trace_create(actors.acme, f"killed-{i:02d}", started_at=f"2026-11-30T10:{i:02d}:00Z")
    server.default = says('{"score": 1, "reason": "fine"}', delay=0.5)
    queue = f"judge-{os.getpid()}-{int(time.time())}"
    log = Path(django_settings.VAR_DIR) / f"test-worker-{queue}.log"
    env = {"EVALSITE_CHUNK_LEASE_SECONDS": 3, "EVALSITE_VISIBILITY_TIMEOUT_SECONDS": 3}
    first = worker_start(queue=queue, concurrency=1, log_path=log, env=env)
    second = None
    try:
        scoring_pass = pass_start(project=actors.acme, data={"scorers": ["relevance"], "limit": runs}, queue=queue)
        wait_for(
            lambda: Score.objects.filter(scorer="relevance").count() >= 4, timeout=120, what=f"judge scores ({log})"
        )
        kill_worker(first)
        kept = set(Score.objects.filter(scorer="relevance").values_list("pk", flat=True))
        assert 4 <= len(kept) < runs
        assert ScoringPass.objects.get(pk=scoring_pass.pk).status == PassStatus.RUNNING

        second = worker_start(queue=queue, concurrency=1, log_path=log, env=env)
        wait_for(
            lambda: ScoringPass.objects.filter(pk=scoring_pass.pk, status=PassStatus.DONE).exists(),
            timeout=180,
            what=f"the pass to finish after the kill ({log})",
        )
    finally:
        for process in (first, second):
            if process is not None:
                process_stop(process)

    assert Score.objects.filter(scorer="relevance").count() == runs
    assert kept <= set(Score.objects.filter(scorer="relevance").values_list("pk", flat=True))
    assert not Score.objects.values("trace", "scorer").annotate(n=Count("id")).filter(n__gt=1).exists()
    # Calls ran side by side, and the scores kept were not asked for again
    # (at most the calls in flight at the kill were lost and made again).
    assert server.max_in_flight >= 2
    assert server.count <= runs + 4
