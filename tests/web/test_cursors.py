"""A pagination cursor is text the client can change: a tampered one is a 400 naming
``cursor`` on every list of the API and of the pages, never a 500."""

import base64
from urllib.parse import quote, urlencode

import pytest
from django.test import Client

from datasets.models import Dataset, Experiment
from gating.models import GateRun
from tests.factories import trace_create


def _cursor(**tokens):
    return quote(base64.b64encode(urlencode(tokens).encode()).decode())


# Never a cursor of any list: a 400 everywhere.
BROKEN = ["not-a-cursor", _cursor(p="abc\x00def"), quote(base64.b64encode(b"\xff\xfe=\x00&&").decode())]
# A bad position for some lists (a date column), a fine one for others (a name): never a 500.
TAMPERED = [
    *BROKEN,
    _cursor(p="yesterday"),
    _cursor(p="2026-13-45T99:00:00Z"),
    _cursor(p="0001-01-01T00:00:00+05:00"),
    _cursor(p="9999-12-31T23:59:59-05:00"),
    _cursor(p="99999999999999999999"),
    _cursor(p="-1e400"),
    _cursor(o="99999999999999999999"),
    _cursor(o="-3", p="1"),
    _cursor(r="maybe"),
]

API_LISTS = [
    "/v1/api/traces",
    "/v1/api/datasets",
    "/v1/api/datasets/gold/cases",
    "/v1/api/experiments",
    "/v1/api/gate-runs",
    "/v1/api/gate-runs/{gate_run}/cases",
    "/v1/api/label-configs",
    "/v1/api/traces/r1/labels",
]
PAGE_LISTS = [
    "/p/acme/runs/",
    "/p/acme/datasets/gold/",
    "/p/acme/review/",
    "/p/acme/passes/",
    "/p/acme/review/scores/",
    "/p/acme/gate-runs/",
]


@pytest.fixture
def lists(actors):
    dataset = Dataset.objects.create(project=actors.acme, name="gold")
    trace_create(actors.acme, "r1", input="q", output="a")
    experiment = Experiment.objects.create(project=actors.acme, name="v1", dataset=dataset)
    gate_run = GateRun.objects.create(project=actors.acme, dataset=dataset, experiment=experiment, verdict="PASS")
    return {"gate_run": gate_run.pk}


@pytest.mark.parametrize("path", API_LISTS)
def test_a_tampered_cursor_on_an_api_list_is_a_400_naming_it(actors, lists, path):
    api = actors.api()
    assert api.get(path.format(**lists)).status_code == 200
    for cursor in TAMPERED:
        response = api.get(f"{path.format(**lists)}?cursor={cursor}")
        assert response.status_code in (200, 400), (cursor, response.content[:300])
        if response.status_code == 400 or cursor in BROKEN:
            assert response.json()["errors"][0]["field"] == "cursor", cursor


@pytest.mark.parametrize("path", PAGE_LISTS)
def test_a_tampered_cursor_on_a_page_is_a_400(actors, lists, path):
    client = Client()
    client.force_login(actors.victor)
    assert client.get(path).status_code == 200
    for cursor in TAMPERED:
        assert client.get(f"{path}?cursor={cursor}").status_code in (200, 400), cursor
    for cursor in BROKEN:
        assert client.get(f"{path}?cursor={cursor}").status_code == 400, cursor


def test_a_date_that_is_no_date_in_a_cursor_is_a_400(actors, lists):
    for cursor in [_cursor(p="yesterday"), _cursor(p="2026-13-45T99:00:00Z"), _cursor(p="0001-01-01T00:00:00+05:00")]:
        response = actors.api().get(f"/v1/api/traces?cursor={cursor}")
        assert response.status_code == 400, (cursor, response.content[:300])
        assert response.json()["errors"][0]["field"] == "cursor"


def test_the_cursor_a_list_gave_still_pages(actors):
    for i in range(3):
        trace_create(actors.acme, f"r{i}", input="q", output="a")
    api = actors.api()
    first = api.get("/v1/api/traces?page_size=2").json()
    second = api.get(first["next"])
    assert second.status_code == 200 and len(second.json()["results"]) == 1
