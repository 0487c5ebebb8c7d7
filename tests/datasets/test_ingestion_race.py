"""The same ``trace_id`` sent at the same moment by two clients, against a live server.

Each round, two threads wait on a barrier and then post the same ``trace_id``: with
different content one gets 201 and the other 409; with the same content both succeed
(a retry is a no-op). Never a 500, and exactly one run stored per ``trace_id``.
"""

import json
import threading
import urllib.error
import urllib.request
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection

from datasets.models import Trace
from tests.factories import run_payload
from tests.live import web_server

ROUNDS = 40

pytestmark = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="the race needs concurrent writers: PostgreSQL (DATABASE_URL)"
)


def _post(url, key, payload):
    request = urllib.request.Request(
        url + "/v1/api/traces",
        data=json.dumps(payload).encode(),
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def _race(url, key, first, second):
    """Post ``first`` and ``second`` from two threads released together; returns both statuses."""
    barrier = threading.Barrier(2)

    def send(payload):
        barrier.wait()
        return _post(url, key, payload)

    with ThreadPoolExecutor(max_workers=2) as pool:
        return sorted(pool.map(send, [first, second]))


def test_two_clients_sending_one_trace_id_with_different_content_get_one_201_and_one_409(transactional_db, actors):
    outcomes = Counter()
    with web_server(workers=2, threads=4) as url:
        for i in range(ROUNDS):
            trace_id = f"race-{i}"
            first = run_payload(trace_id, output="first answer")
            second = run_payload(trace_id, output="second answer")
            outcomes[tuple(_race(url, actors.acme_key, first, second))] += 1
    assert outcomes == {(201, 409): ROUNDS}, outcomes
    assert Trace.objects.filter(project=actors.acme).count() == ROUNDS


def test_two_clients_sending_one_batch_with_the_same_content_both_succeed(transactional_db, actors):
    outcomes = Counter()
    with web_server(workers=2, threads=4) as url:
        for i in range(ROUNDS // 2):
            batch = {"traces": [run_payload(f"same-{i}-{n}") for n in range(5)]}
            outcomes[tuple(_race(url, actors.acme_key, batch, batch))] += 1
    # The first writer creates the runs; the other finds them stored (200) or, when it
    # checked before the first committed, retries and then finds them stored.
    assert set(outcomes) <= {(200, 201), (201, 201)}, outcomes
    assert Trace.objects.filter(project=actors.acme).count() == ROUNDS // 2 * 5
