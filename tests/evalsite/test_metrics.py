"""``/metrics`` after a known workload: names and values, the token, and many processes.

Counters live in the process (or in ``PROMETHEUS_MULTIPROC_DIR``), so the in-process
tests compare a scrape after the workload with one before it.
"""

import json
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.test import Client
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from evalsite.models import Heartbeat
from scoring.models import ScoringChunk, ScoringPass
from scoring.passes.services import pass_start
from tests.factories import run_payload, trace_create
from tests.live import celery_worker, wait_for, web_server
from tests.scoring.judge_server import judge_server, says


def samples(text):
    """``{(name, frozenset(labels)): value}`` of an exposition."""
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def scrape(client=None, **headers):
    response = (client or Client()).get("/metrics", **headers)
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/plain")
    return samples(response.content.decode())


def delta(before, after, name, **labels):
    key = (name, frozenset(labels.items()))
    return after.get(key, 0) - before.get(key, 0)


def _gate_answered(actors):
    api = actors.api()
    assert api.post("/v1/api/datasets", {"name": "m"}, format="json").status_code == 201
    case = {"name": "c1", "input": "q", "expectations": {"expected_tools": ["quote_room"]}}
    assert api.post("/v1/api/datasets/m/cases", case, format="json").status_code == 201
    run = run_payload("gate-run", experiment="v1", dataset="m", case="c1")
    assert api.post("/v1/api/traces", run, format="json").status_code == 201
    response = api.post("/v1/api/gate", {"dataset": "m", "experiment": "v1"}, format="json")
    assert response.json()["verdict"] == "PASS"


def test_the_counters_follow_a_known_workload(transactional_db, actors):
    before = scrape()
    api = actors.api()
    batch = {"traces": [run_payload(f"m-{i}") for i in range(3)]}
    assert api.post("/v1/api/traces", batch, format="json").status_code == 201
    body = api.post("/v1/api/score", {"scorers": ["answered", "exact_match"]}, format="json").json()
    assert (len(body["scores"]), len(body["skipped"])) == (3, 3)
    _gate_answered(actors)
    actors.acme.quota_per_minute = 1
    actors.acme.save()
    two_more = {"traces": [run_payload(f"over-{i}") for i in range(2)]}
    assert api.post("/v1/api/traces", two_more, format="json").status_code == 429
    after = scrape()

    assert delta(before, after, "evalsite_runs_ingested_total", project="acme") == 4
    assert delta(before, after, "evalsite_scores_written_total", project="acme", source="builtin") >= 3
    reasons = {
        dict(labels)["reason"]: value - before.get((name, labels), 0)
        for (name, labels), value in after.items()
        if name == "evalsite_abstentions_total" and dict(labels)["project"] == "acme"
    }
    assert sum(reasons.values()) >= 3 and all(reason for reason in reasons)
    assert delta(before, after, "evalsite_quota_refusals_total", project="acme") == 2
    assert delta(before, after, "evalsite_gate_verdicts_total", project="acme", verdict="PASS") == 1


def test_a_refused_batch_counts_no_run(transactional_db, actors):
    before = scrape()
    bad = {"traces": [run_payload("ok-1"), run_payload("bad", status="maybe")]}
    assert actors.api().post("/v1/api/traces", bad, format="json").status_code == 400
    assert delta(before, scrape(), "evalsite_runs_ingested_total", project="acme") == 0


def test_judge_calls_are_counted_by_outcome_with_their_latency(transactional_db, actors):
    from scoring.judge.services import judge_configure

    with judge_server() as server:
        judge_configure(
            project=actors.acme, endpoint=server.url, model="m", api_key="", timeout_seconds=5,
            max_concurrency=2, criteria={"relevance": "Is it on topic?"},
        )  # fmt: skip
        ids = [trace_create(actors.acme, f"j-{i}").trace_id for i in range(3)]
        server.script(says('{"score": 1, "reason": "ok"}'), says("prose, not JSON"), says('{"score": 0.9}'))
        before = scrape()
        actors.api().post("/v1/api/score", {"scorers": ["relevance"], "trace_ids": ids}, format="json")
        after = scrape()
    assert delta(before, after, "evalsite_judge_calls_total", outcome="scored") == 2
    assert delta(before, after, "evalsite_judge_calls_total", outcome="prose_reply") == 1
    assert delta(before, after, "evalsite_judge_call_seconds_count") == 3
    assert delta(before, after, "evalsite_judge_call_seconds_sum") > 0


def test_chunks_by_state_and_heartbeats_are_read_from_the_database(db, actors):
    now = timezone.now()
    scoring_pass = ScoringPass.objects.create(project=actors.acme, scorers=["answered"], selection={}, status="running")
    states = [
        ("queued", None),
        ("queued", None),
        ("running", now + timedelta(minutes=5)),
        ("running", now),
        ("done", None),
    ]
    for ordinal, (status, lease) in enumerate(states):
        ScoringChunk.objects.create(scoring_pass=scoring_pass, ordinal=ordinal, status=status, lease_until=lease)
    Heartbeat.objects.create(hostname="w1@box", seen_at=now - timedelta(seconds=30))
    got = scrape()
    assert [got[("evalsite_pass_chunks", frozenset({"state": s}.items()))] for s in ("queued", "running", "leased")] == [
        2, 2, 1,
    ]  # fmt: skip
    assert 29 <= got[("evalsite_worker_heartbeat_age_seconds", frozenset({"worker": "w1@box"}.items()))] < 60


def test_a_token_when_set_is_required(db, settings):
    settings.EVALSITE_METRICS_TOKEN = "metrics-token-0123456789"
    assert Client().get("/metrics").status_code == 401
    assert Client().get("/metrics", HTTP_AUTHORIZATION="Bearer wrong").status_code == 401
    assert scrape(HTTP_AUTHORIZATION="Bearer metrics-token-0123456789")


@pytest.mark.worker
def test_web_processes_and_a_worker_add_up_and_log_json_lines(transactional_db, actors, tmp_path):
    env = {"PROMETHEUS_MULTIPROC_DIR": str(tmp_path), "EVALSITE_LOG_FORMAT": "json"}
    with web_server(workers=2, threads=1, env=env) as url, celery_worker(env=env) as (queue, _):
        import urllib.request

        for i in range(6):
            request = urllib.request.Request(
                url + "/v1/api/traces", data=json.dumps(run_payload(f"mp-{i}")).encode(), method="POST",
                headers={"Authorization": f"Bearer {actors.acme_key}", "Content-Type": "application/json"},
            )  # fmt: skip
            assert urllib.request.urlopen(request).status == 201
        scoring_pass = pass_start(project=actors.acme, data={"scorers": ["answered"]}, queue=queue)
        wait_for(lambda: ScoringPass.objects.filter(pk=scoring_pass.pk, status="done").exists(), what="the pass")
        scrapes = [samples(urllib.request.urlopen(url + "/metrics").read().decode()) for _ in range(4)]
        web_log = Path(django_settings.VAR_DIR, f"test-gunicorn-{url.rsplit(':', 1)[1]}.log").read_text()
    for got in scrapes:  # whichever process answers, the sum of all of them
        assert got[("evalsite_runs_ingested_total", frozenset({"project": "acme"}.items()))] == 6
        assert got[("evalsite_scores_written_total", frozenset({"project": "acme", "source": "builtin"}.items()))] == 6
    lines = [json.loads(line) for line in web_log.splitlines() if line.startswith("{")]
    ingest = [line for line in lines if line["logger"] == "evalsite.request" and line["path"] == "/v1/api/traces"]
    assert len(ingest) == 6 and {(line["status"], line["method"]) for line in ingest} == {(201, "POST")}
    assert all(line["api_key"] and actors.acme_key not in json.dumps(line) for line in ingest)
    worker_log = Path(django_settings.VAR_DIR, f"test-worker-{queue}.log").read_text()
    tasks = [json.loads(line) for line in worker_log.splitlines() if line.startswith('{"time"')]
    assert {"scoring.pass_plan", "scoring.chunk_score"} <= {t.get("task") for t in tasks}
