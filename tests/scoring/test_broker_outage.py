"""The broker goes away: ``POST /v1/api/passes`` still answers 202, and the pass runs once it returns.

A private ``redis-server`` (started by the test on a port of its own) is the broker of
a live web server and, later, of a worker. With it stopped, the pass is stored
``queued`` and the answer is 202, never a 500 over a stored pass; when the broker
returns, a worker's sweeper sends the pass's planning and the pass runs to the end.
"""

import json
import shutil
import time
import urllib.error
import urllib.request

import pytest

from scoring.models import PassStatus, ScoringPass
from tests.factories import trace_create
from tests.live import celery_worker, wait_for, web_server
from tests.outage import private_redis

pytestmark = [
    pytest.mark.worker,
    pytest.mark.skipif(shutil.which("redis-server") is None, reason="redis-server not found"),
]

LEASE_SECONDS = 4


def _post_pass(url, key):
    request = urllib.request.Request(
        url + "/v1/api/passes",
        data=json.dumps({"scorers": ["answered"]}).encode(),
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
    )
    started = time.monotonic()
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read()), time.monotonic() - started
    except urllib.error.HTTPError as error:
        return error.code, error.read(), time.monotonic() - started


def test_a_pass_requested_while_the_broker_is_down_is_accepted_and_runs_when_it_returns(transactional_db, actors):
    for i in range(3):
        trace_create(actors.acme, f"outage-{i}")
    env = {"EVALSITE_CHUNK_LEASE_SECONDS": LEASE_SECONDS}
    with private_redis() as broker:
        env["REDIS_URL"] = broker.url
        with web_server(workers=1, threads=2, env=env) as url:
            broker.stop()
            status, body, took = _post_pass(url, actors.acme_key)
            print(f"POST /v1/api/passes with the broker down: {status} in {took:.2f}s")
            assert status == 202, body
            assert body["status"] == "queued"
            assert ScoringPass.objects.get(pk=body["id"]).status == PassStatus.QUEUED

            broker.start()
            started = time.monotonic()
            with celery_worker(queue="celery", env=env):
                finished = wait_for(
                    lambda: ScoringPass.objects.filter(pk=body["id"], status=PassStatus.DONE).first(),
                    timeout=120,
                    what="the sweeper to send the pass",
                )
            print(f"the pass finished {time.monotonic() - started:.1f}s after the broker returned")
    assert finished.written == 3
