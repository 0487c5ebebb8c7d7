"""A capture from the pages names each run and what happened to it, in the page's words."""

import pytest
from django.contrib.messages import get_messages
from django.test import Client

from datasets.models import Dataset, GoldenCase
from tests.factories import run_payload

BOX = "Take the answer even if the run failed a check"


@pytest.fixture
def acme(actors):
    batch = [run_payload(f"r-{i}", experiment="v1") for i in range(4)]
    assert actors.api().post("/v1/api/traces", {"traces": batch}, format="json").status_code == 201
    Dataset.objects.create(project=actors.acme, name="reservo")
    failed = actors.api().post(
        "/v1/api/score",
        {"scorers": ["contains"], "config": {"contains": {"value": "nope"}}, "trace_ids": ["r-0", "r-1", "r-2"]},
        format="json",
    )
    assert failed.status_code == 200
    return actors


def _client(user):
    client = Client()
    client.force_login(user)
    return client


def _messages(response):
    return [str(m) for m in get_messages(response.wsgi_request)]


def test_a_refused_run_page_capture_names_the_run_and_the_box_to_tick(acme):
    response = _client(acme.bob).post(
        "/p/acme/runs/r-0/", {"dataset": "reservo", "use_output_as_expected": "on", "expected_output_format": "text"}
    )
    assert response.status_code == 400
    html = response.content.decode()
    assert "Run r-0 failed contains, so its answer would make its own failure the reference." in html
    assert f"tick &#x27;{BOX}&#x27; to capture it anyway." in html
    assert "trace_ids" not in html and "accept_failed_output: true" not in html
    assert not GoldenCase.objects.exists()


def test_ticking_the_box_captures_it_anyway(acme):
    response = _client(acme.bob).post(
        "/p/acme/runs/r-0/",
        {"dataset": "reservo", "use_output_as_expected": "on", "accept_failed_output": "on",
         "expected_output_format": "text"},
    )  # fmt: skip
    assert response.status_code == 302
    assert GoldenCase.objects.get().source_trace_id == "r-0"


def test_a_bulk_capture_reports_each_run_captured_already_there_or_skipped(acme):
    client = _client(acme.bob)
    assert client.post("/p/acme/runs/", {"dataset": "reservo", "trace_ids": ["r-3"]}).status_code == 302
    GoldenCase.objects.update(expected_output="x")  # the case stays; the next capture finds it
    response = client.post(
        "/p/acme/runs/",
        {"dataset": "reservo", "trace_ids": ["r-0", "r-1", "r-3"], "use_output_as_expected": "on"},
    )
    assert response.status_code == 302
    lines = _messages(response)
    assert "Captured 0 runs into reservo." in lines
    assert "Already a case in reservo, no twin created: r-3 (case r-3)." in lines
    assert any(line.startswith("Skipped 2 runs that failed a check") and "r-0 (contains), r-1 (contains)." in line
               and f"Tick '{BOX}' to capture them anyway." in line for line in lines)  # fmt: skip


def test_a_bulk_capture_where_every_run_fails_skips_them_as_the_box_promises(acme):
    response = _client(acme.bob).post(
        "/p/acme/runs/?experiment=v1",
        {"dataset": "reservo", "trace_ids": ["r-0", "r-1", "r-2"], "use_output_as_expected": "on"},
    )
    assert response.status_code == 302 and response["Location"] == "/p/acme/runs/?experiment=v1"
    lines = _messages(response)
    assert len(lines) == 2 and lines[0] == "Captured 0 runs into reservo."
    assert "r-0 (contains), r-1 (contains), r-2 (contains)" in lines[1]
    assert not GoldenCase.objects.exists()
    page = _client(acme.bob).get("/p/acme/runs/").content.decode()
    assert "runs that failed a check are skipped" in page


def test_a_bulk_capture_with_the_box_ticked_takes_the_failing_runs(acme):
    response = _client(acme.bob).post(
        "/p/acme/runs/",
        {"dataset": "reservo", "trace_ids": ["r-0", "r-1"], "use_output_as_expected": "on",
         "accept_failed_output": "on"},
    )  # fmt: skip
    assert response.status_code == 302
    assert "Captured 2 runs into reservo: r-0, r-1." in _messages(response)
