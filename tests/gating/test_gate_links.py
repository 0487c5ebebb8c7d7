"""Gate answers link to the pages people open: the gate run's page and each case's run."""

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.urls import reverse

from datasets.models import Dataset, GoldenCase
from evalsite.env import env_url
from gating.models import GateRun
from tests.factories import run_payload

TRACE_ID = "ci/main 42/quote?x#1"


@pytest.fixture
def dataset(actors):
    dataset = Dataset.objects.create(project=actors.acme, name="reservo")
    for name in ("quote_focus_pro_3h", "quote_focus_basic_3h"):
        GoldenCase.objects.create(dataset=dataset, name=name, input="q", expectations={"latency_threshold_ms": 2000})
    run = run_payload(TRACE_ID, dataset="reservo", case="quote_focus_pro_3h", experiment="v1", latency_ms=900)
    assert actors.api().post("/v1/api/traces", run, format="json").status_code == 201
    return dataset


def gate(actors, **body):
    response = actors.api().post("/v1/api/gate", {"dataset": "reservo", "experiment": "v1", **body}, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def test_it_links_the_gate_run_page_from_the_request_when_no_public_url_is_set(actors, dataset, settings):
    settings.EVALSITE_PUBLIC_URL = None

    answer = gate(actors)

    assert answer["url"] == f"http://testserver/p/acme/gate-runs/{answer['gate_run_id']}/"


def test_it_links_each_run_under_the_public_url_quoted_as_the_pages_route_it(actors, dataset, settings):
    settings.EVALSITE_PUBLIC_URL = "https://evals.example.com"

    answer = gate(actors)

    cases = {c["name"]: c for c in answer["cases"]}
    expected = "https://evals.example.com" + reverse("run", kwargs={"slug": "acme", "trace_id": TRACE_ID})
    assert cases["quote_focus_pro_3h"]["run_url"] == expected
    assert "%20" in expected and "%3F" in expected and "%23" in expected
    assert cases["quote_focus_basic_3h"]["run_url"] is None  # no run recorded
    assert answer["url"] == f"https://evals.example.com/p/acme/gate-runs/{answer['gate_run_id']}/"


def test_a_run_link_opens_the_run_page(actors, dataset, settings, client):
    settings.EVALSITE_PUBLIC_URL = None
    client.force_login(actors.alice)

    run_url = next(c["run_url"] for c in gate(actors)["cases"] if c["run_url"])

    page = client.get(run_url.removeprefix("http://testserver"))
    assert page.status_code == 200
    assert TRACE_ID in page.content.decode()


def test_links_are_not_stored_with_the_verdict(actors, dataset, settings):
    settings.EVALSITE_PUBLIC_URL = "https://old.example.com"
    answer = gate(actors)
    settings.EVALSITE_PUBLIC_URL = "https://new.example.com"

    again = actors.api().get(f"/v1/api/gate-runs/{answer['gate_run_id']}").json()

    assert "url" not in GateRun.objects.get(pk=answer["gate_run_id"]).result
    assert again["url"].startswith("https://new.example.com/p/acme/gate-runs/")
    assert all(c["run_url"] is None or c["run_url"].startswith("https://new.") for c in again["cases"])


def test_the_gate_run_list_links_each_run(actors, dataset, settings):
    settings.EVALSITE_PUBLIC_URL = None
    gate_run_id = gate(actors)["gate_run_id"]

    listed = actors.api().get("/v1/api/gate-runs").json()["results"]

    assert [r["url"] for r in listed] == [f"http://testserver/p/acme/gate-runs/{gate_run_id}/"]


def test_a_gate_run_still_running_has_its_link_too(actors, dataset, settings):
    settings.EVALSITE_PUBLIC_URL = None
    settings.EVALSITE_GATE_SYNC_MAX_CASES = 0  # handed to a worker: the answer is 202

    response = actors.api().post("/v1/api/gate", {"dataset": "reservo", "experiment": "v1"}, format="json")

    assert response.status_code == 202
    body = response.json()
    assert (body["status"], body["url"]) == ("running", f"http://testserver/p/acme/gate-runs/{body['gate_run_id']}/")


def test_an_outsider_gets_404_for_a_gate_run_and_no_link(actors, dataset):
    gate_run_id = gate(actors)["gate_run_id"]

    response = actors.outsider_api().get(f"/v1/api/gate-runs/{gate_run_id}")

    assert response.status_code == 404
    assert "url" not in response.json()


@pytest.mark.parametrize(
    "raw, expected",
    [("https://evals.example.com/", "https://evals.example.com"), ("http://h:8000/evals", "http://h:8000/evals")],
)
def test_the_public_url_setting_drops_a_trailing_slash(monkeypatch, raw, expected):
    monkeypatch.setenv("EVALSITE_PUBLIC_URL", raw)

    assert env_url("EVALSITE_PUBLIC_URL") == expected


@pytest.mark.parametrize("raw", ["evals.example.com", "ftp://evals.example.com", "https://h/?x=1", "https://"])
def test_the_public_url_setting_refuses_what_is_not_an_http_url(monkeypatch, raw):
    monkeypatch.setenv("EVALSITE_PUBLIC_URL", raw)

    with pytest.raises(ImproperlyConfigured, match="EVALSITE_PUBLIC_URL"):
        env_url("EVALSITE_PUBLIC_URL")
