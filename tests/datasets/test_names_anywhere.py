"""Dataset and experiment names with "/", spaces or non-ASCII letters work on every path that takes one."""

from urllib.parse import quote

import pytest
from django.test import Client

from tests.factories import run_payload

DATASET = "feature/123 équipe"
EXPERIMENT = "123/merge"


@pytest.fixture
def named(actors):
    api = actors.api()
    assert api.post("/v1/api/datasets", {"name": DATASET}, format="json").status_code == 201
    path = quote(DATASET, safe="")
    case = {"name": "quote", "expectations": {"contains": "EUR"}}
    assert api.post(f"/v1/api/datasets/{path}/cases", case, format="json").status_code == 201
    run = run_payload("r1", experiment=EXPERIMENT, dataset=DATASET, case="quote", output="75 EUR")
    assert api.post("/v1/api/traces", run, format="json").status_code == 201
    return path


def test_every_api_path_reads_a_name_with_a_slash_a_space_and_an_accent(actors, named):
    api = actors.api()
    assert api.get(f"/v1/api/datasets/{named}").json()["name"] == DATASET
    assert [c["name"] for c in api.get(f"/v1/api/datasets/{named}/cases").json()["results"]] == ["quote"]
    export = api.get(f"/v1/api/datasets/{named}/export")
    assert export.status_code == 200 and b'"quote"' in b"".join(export.streaming_content)
    imported = api.post(f"/v1/api/datasets/{named}/import", b'{"name": "book"}\n', content_type="application/jsonl")
    assert imported.status_code == 201
    assert api.put(f"/v1/api/datasets/{named}/gate-policy", {"trials": 1}, format="json").status_code == 200
    assert api.get(f"/v1/api/experiments/{quote(EXPERIMENT, safe='')}").json()["name"] == EXPERIMENT
    assert api.get(f"/v1/api/experiments/{EXPERIMENT}").json()["dataset"] == DATASET
    gate = api.post("/v1/api/gate", {"dataset": DATASET, "experiment": EXPERIMENT}, format="json").json()
    assert (gate["dataset"], gate["experiment"]) == (DATASET, EXPERIMENT)
    listed = api.get("/v1/api/traces", {"experiment": EXPERIMENT}).json()["results"]
    assert [r["trace_id"] for r in listed] == ["r1"]
    runs = api.get("/v1/api/gate-runs", {"dataset": DATASET, "experiment": EXPERIMENT}).json()["results"]
    assert len(runs) == 1


def test_every_page_reads_such_a_name(actors, named):
    browser = Client()
    browser.force_login(actors.alice)
    slug = actors.acme.slug
    for url in (
        f"/p/{slug}/datasets/{named}/",
        f"/p/{slug}/datasets/{named}/import/",
        f"/p/{slug}/datasets/{named}/cases/new/",
        f"/p/{slug}/runs/?experiment={quote(EXPERIMENT)}",
        f"/p/{slug}/gate-runs/?dataset={quote(DATASET)}",
        f"/p/{slug}/experiments/",
    ):
        response = browser.get(url)
        assert response.status_code == 200, url
    assert browser.get(f"/p/{slug}/datasets/{named}/export.jsonl").status_code == 200


@pytest.mark.parametrize(
    "name", ["a/cases", "a/export", "a//b", "/a", "a/", "a/../b", "line\nbreak", "\nled", " led", "x" * 101]
)
def test_names_that_would_be_ambiguous_in_a_path_are_refused_naming_the_field(actors, name):
    response = actors.api().post("/v1/api/datasets", {"name": name}, format="json")
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "name"
