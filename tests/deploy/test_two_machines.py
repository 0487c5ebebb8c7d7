"""docs/deploy.md, followed to the letter on two "machines" sharing only PostgreSQL and Redis.

Each machine is a copy of the tree with its own ``var/`` and a venv made from
``requirements.txt`` only; its processes are the Procfile's ``release``, ``web`` and
``worker`` lines in production mode. Runs are ingested through both web processes, a
pass is run by both workers, and the gate answers PASS: every chunk was taken once,
by one of the two workers, and both workers took some; no score was written twice.
"""

import secrets
import uuid

import orjson
import pytest
from django.conf import settings
from django.db import connection
from django.db.models import Count, Sum

from scoring.models import Score, ScoringChunk
from tests.deploy.stack import Client, deploy_venv, machine_make, procfile, wait_until
from tests.live import children_of, database_url, free_port

pytestmark = pytest.mark.worker

CASES = 40
SCORERS = ["answered", "no_errors", "tool_choice"]
CHUNK_RUNS = 2
METRICS_TOKEN = secrets.token_urlsafe(24)


@pytest.fixture
def on_postgresql_and_redis(transactional_db):
    if connection.vendor != "postgresql" or not settings.REDIS_URL:
        pytest.skip("the deployment recipe runs on PostgreSQL and Redis (set DATABASE_URL and REDIS_URL)")


@pytest.fixture
def machines(on_postgresql_and_redis, tmp_path):
    bin_dir = deploy_venv()
    shared = {
        "EVALSITE_PRODUCTION": "1",
        "SECRET_KEY": secrets.token_urlsafe(64),
        "ALLOWED_HOSTS": "127.0.0.1",
        "DATABASE_URL": database_url(),
        "REDIS_URL": settings.REDIS_URL,
        # A queue of this test's own: a developer's worker on the same Redis takes nothing.
        "EVALSITE_QUEUE": f"deploy-{uuid.uuid4().hex[:10]}",
        "EVALSITE_PASS_CHUNK_RUNS": str(CHUNK_RUNS),
        "WEB_CONCURRENCY": "2",
        "WORKER_CONCURRENCY": "1",
        "EVALSITE_METRICS_TOKEN": METRICS_TOKEN,
        "EVALSITE_LOG_FORMAT": "json",
    }
    made = [machine_make(tmp_path, name, bin_dir=bin_dir, port=free_port(), shared_env=shared) for name in "ab"]
    yield made
    for machine in made:
        machine.stop()


def _stack_start(machines):
    commands = procfile()
    for machine in machines:
        release = machine.run(commands["release"])
        assert release.returncode == 0, release.stderr[-3000:]
    for machine in machines:
        machine.start("web", commands["web"])
        machine.start("worker", commands["worker"])
    clients = [Client(f"http://{m.env['EVALSITE_BIND']}") for m in machines]
    for machine, client in zip(machines, clients, strict=True):
        running = [(f"{machine.name} {n}", p) for n, p in machine.processes.items()]
        wait_until(client.answers, timeout=90, what=f"web on {machine.name}", processes=running)
    return clients


def _project_key(machine):
    created = machine.run("python manage.py create_project team --name Team")
    assert created.returncode == 0, created.stderr
    return created.stdout.strip().splitlines()[-1]


def _case(i):
    return {"name": f"case-{i:03d}", "input": f"question {i}", "expectations": {"expected_tools": ["quote_room"]}}


def _run(i):
    return {
        "trace_id": f"v1-{i:03d}", "experiment": "v1", "dataset": "golden", "case": f"case-{i:03d}",
        "input": f"question {i}", "output": f"answer {i}", "status": "ok",
        "started_at": "2026-11-30T10:00:00Z", "latency_ms": 900, "cost_cents": 0.1,
        "spans": [{"span_id": "t1", "kind": "tool", "name": "quote_room", "input": {"i": i}, "output": {"ok": True}}],
    }  # fmt: skip


def _ingest(clients):
    a, b = clients
    assert a.call("POST", "/v1/api/datasets", {"name": "golden"})[0] == 201
    jsonl = b"\n".join(orjson.dumps(_case(i)) for i in range(CASES))
    status, body = b.call("POST", "/v1/api/datasets/golden/import", jsonl, content_type="application/jsonl")
    assert status in (200, 201), body
    half = CASES // 2
    for client, part in ((a, range(half)), (b, range(half, CASES))):
        status, body = client.call("POST", "/v1/api/traces", {"traces": [_run(i) for i in part]})
        assert status in (200, 201), body


def _pass_run(clients, machines):
    a, b = clients
    status, started = b.call("POST", "/v1/api/passes", {"scorers": SCORERS, "experiment": "v1", "limit": CASES})
    assert status == 202, started
    running = [(f"{m.name} {n}", p) for m in machines for n, p in m.processes.items()]

    def finished():
        body = a.call("GET", f"/v1/api/passes/{started['id']}")[1]
        return body if body["status"] in ("done", "failed") else None

    return wait_until(finished, timeout=180, what="the pass", processes=running)


def test_two_machines_share_the_work_of_a_pass_and_answer_the_gate(machines):
    clients = _stack_start(machines)
    key = _project_key(machines[0])
    for client in clients:
        client.key = key
    _ingest(clients)

    finished = _pass_run(clients, machines)
    assert (finished["status"], finished["written"]) == ("done", CASES * len(SCORERS)), finished

    chunks = ScoringChunk.objects.all()
    assert chunks.count() == CASES // CHUNK_RUNS
    assert set(chunks.values_list("attempts", flat=True)) == {1}, "a chunk was taken twice"
    assert chunks.aggregate(total=Sum("written"))["total"] == Score.objects.count() == CASES * len(SCORERS)
    duplicated = Score.objects.values("trace", "scorer").annotate(n=Count("id")).filter(n__gt=1)
    assert not duplicated.exists()
    pids = {int(claim.rsplit(":", 1)[1]) for claim in chunks.values_list("claimed_by", flat=True)}
    for machine in machines:
        pool = set(children_of(machine.processes["worker"].pid))
        assert pids & pool, f"the worker of machine {machine.name} took no chunk:\n{machine.log('worker')}"

    status, gate = clients[0].call("POST", "/v1/api/gate", {"dataset": "golden", "experiment": "v1"})
    assert status == 200, gate
    assert (gate["verdict"], gate["pass_rate"]) == ("PASS", 1.0), gate
    _metrics_add_up(clients)


def _metrics_add_up(clients):
    """Each machine counts what its own processes did; scraped together, they add up."""
    scraped = [client.metrics(METRICS_TOKEN) for client in clients]
    runs = [m[("evalsite_runs_ingested_total", ("project", "team"))] for m in scraped]
    assert runs == [CASES // 2, CASES // 2]
    scores = [m.get(("evalsite_scores_written_total", ("project", "team"), ("source", "builtin")), 0) for m in scraped]
    assert sum(scores) == CASES * len(SCORERS) and all(scores)
    assert (
        sum(m.get(("evalsite_gate_verdicts_total", ("project", "team"), ("verdict", "PASS")), 0) for m in scraped) == 1
    )
