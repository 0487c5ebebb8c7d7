import json
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

import pytest
from django.db import transaction

from datasets.models import Trace
from evalsite.models import QuotaWindow
from evalsite.quota import quota_remaining, quota_reserve, seconds_to_next_window
from tests.factories import run_payload
from tests.live import web_server


def _limit(project, per_minute):
    project.quota_per_minute = per_minute
    project.save()


def test_a_request_over_the_quota_gets_429_with_retry_after_and_writes_nothing(actors):
    _limit(actors.acme, 5)
    api = actors.api()
    assert (
        api.post("/v1/api/traces", {"traces": [run_payload(f"a{i}") for i in range(3)]}, format="json").status_code
        == 201
    )
    response = api.post("/v1/api/traces", {"traces": [run_payload(f"b{i}") for i in range(3)]}, format="json")
    assert response.status_code == 429
    assert response["Content-Type"] == "application/problem+json"
    assert 1 <= int(response["Retry-After"]) <= 60
    assert "quota of 5 per minute" in response.json()["detail"]
    assert Trace.objects.filter(project=actors.acme).count() == 3
    # What still fits goes through.
    assert (
        api.post("/v1/api/traces", {"traces": [run_payload(f"c{i}") for i in range(2)]}, format="json").status_code
        == 201
    )
    assert quota_remaining(project=actors.acme) == 0


def test_retries_of_stored_runs_do_not_count(actors):
    _limit(actors.acme, 2)
    batch = {"traces": [run_payload("x"), run_payload("y")]}
    api = actors.api()
    assert api.post("/v1/api/traces", batch, format="json").status_code == 201
    assert api.post("/v1/api/traces", batch, format="json").status_code == 200


def test_zero_means_no_ceiling(actors):
    _limit(actors.acme, 0)
    assert (
        actors.api()
        .post("/v1/api/traces", {"traces": [run_payload(f"n{i}") for i in range(40)]}, format="json")
        .status_code
        == 201
    )
    assert not QuotaWindow.objects.exists()


def test_quota_is_per_project(actors):
    _limit(actors.acme, 1)
    actors.api().post("/v1/api/traces", run_payload("mine"), format="json")
    assert actors.outsider_api().post("/v1/api/traces", run_payload("theirs"), format="json").status_code == 201


def test_a_partial_reservation_grants_what_fits(actors):
    _limit(actors.acme, 10)
    with transaction.atomic():
        assert quota_reserve(project=actors.acme, count=7) == 7
        assert quota_reserve(project=actors.acme, count=7, partial=True) == 3
        assert quota_reserve(project=actors.acme, count=1, partial=True) == 0


def test_a_rolled_back_write_gives_its_quota_back(actors):
    _limit(actors.acme, 3)
    with pytest.raises(RuntimeError), transaction.atomic():
        quota_reserve(project=actors.acme, count=3)
        raise RuntimeError("the write failed")
    assert quota_remaining(project=actors.acme) == 3


def test_a_reservation_outside_a_transaction_is_a_programming_error(transactional_db, actors):
    _limit(actors.acme, 3)
    with pytest.raises(RuntimeError, match="inside the transaction"):
        quota_reserve(project=actors.acme, count=1)


def test_retry_after_counts_to_the_next_minute():
    assert seconds_to_next_window(datetime(2026, 11, 30, 10, 0, 45, 500000, tzinfo=UTC)) == 15
    assert seconds_to_next_window(datetime(2026, 11, 30, 10, 0, 59, 999999, tzinfo=UTC)) == 1


def test_the_quota_is_exact_when_several_server_processes_ingest_at_once(transactional_db, actors):
    _limit(actors.acme, 50)
    attempts = 120
    # Stay inside one quota window: the whole burst takes a few seconds.
    while datetime.now(UTC).second > 40:
        time.sleep(1)
    with web_server(workers=3, threads=4) as url:

        def send(i):
            request = urllib.request.Request(
                url + "/v1/api/traces",
                data=json.dumps(run_payload(f"burst-{i}")).encode(),
                headers={"Authorization": f"Bearer {actors.acme_key}", "Content-Type": "application/json"},
            )
            try:
                with urllib.request.urlopen(request, timeout=30) as response:
                    return response.status
            except urllib.error.HTTPError as error:
                return error.code

        with ThreadPoolExecutor(max_workers=12) as pool:
            statuses = list(pool.map(send, range(attempts)))
    assert statuses.count(201) == 50
    assert statuses.count(429) == attempts - 50
    assert Trace.objects.filter(project=actors.acme).count() == 50
    assert sum(QuotaWindow.objects.filter(project=actors.acme).values_list("used", flat=True)) == 50
