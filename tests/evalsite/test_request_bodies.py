"""Bodies as clients really send them, against a real server (gunicorn): chunked bodies
are read whole under the size limit, and a JSON object naming a key twice is a 400.
"""

import json

import pytest
import requests

from datasets.models import Experiment, Trace
from tests.base import actors_create
from tests.factories import run_payload
from tests.live import web_server


@pytest.fixture(scope="module")
def live_url(django_db_setup):
    with web_server(workers=1, threads=2) as url:
        yield url


@pytest.fixture
def live(live_url, transactional_db):
    return live_url, actors_create()


def _chunks(body, size=100):
    return (body[i : i + size] for i in range(0, len(body), size))  # a generator: requests sends it chunked


def _headers(actors):
    return {"Authorization": f"Bearer {actors.acme_key}", "Content-Type": "application/json"}


def test_a_chunked_run_is_read_whole(live):
    url, actors = live
    body = json.dumps({"traces": [run_payload(f"r{i}") for i in range(20)]}).encode()
    response = requests.post(url + "/v1/api/traces", data=_chunks(body), headers=_headers(actors), timeout=30)
    assert response.status_code == 201, response.text
    assert Trace.objects.count() == 20


def test_a_chunked_body_over_the_limit_is_a_413(live):
    url, actors = live
    chunks = (b" " * 1_000_000 for _ in range(17))  # 17 MB, over the 16 MiB default
    response = requests.post(url + "/v1/api/traces", data=chunks, headers=_headers(actors), timeout=60)
    assert response.status_code == 413
    assert response.headers["Content-Type"].startswith("application/problem+json")
    assert "over the limit" in response.json()["detail"]


@pytest.mark.parametrize("chunked", [False, True])
def test_a_key_sent_twice_is_a_400_naming_it(live, chunked):
    url, actors = live
    body = b'{"name": "v1", "metadata": {"commit": "abc", "commit": "def"}}'
    response = requests.post(
        url + "/v1/api/experiments", data=_chunks(body) if chunked else body, headers=_headers(actors), timeout=30
    )
    assert response.status_code == 400, response.text
    assert response.json()["errors"] == [
        {"field": "metadata.commit", "message": "holds the key 'commit' twice; send each key once"}
    ]
    assert not Experiment.objects.exists()


def test_a_trace_id_sent_twice_in_one_run_is_a_400(live):
    url, actors = live
    body = b'{"trace_id": "a", "input": "q", "trace_id": "b"}'
    response = requests.post(url + "/v1/api/traces", data=body, headers=_headers(actors), timeout=30)
    assert response.status_code == 400, response.text
    assert response.json()["errors"][0]["field"] == "trace_id"
    assert not Trace.objects.exists()
