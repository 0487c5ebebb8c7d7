"""The runs list's "Select all N runs matching this filter": every run the filter matches
becomes a case, found again by the server from the list's query parameters (never from a
list of ids), in one transaction, bounded, and safe to repeat."""

from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.messages import get_messages
from django.test import Client

from datasets.models import Dataset, GoldenCase, Trace
from tests.factories import run_payload
from web.pages.runs import ALL_MATCHING_MAX

START = datetime(2026, 11, 30, 10, 0, tzinfo=UTC)


def _runs(project, prefix, n, *, experiment=None):
    """``n`` stored runs (written in bulk: the capture reads only their ids, input and answer)."""
    Trace.objects.bulk_create(
        Trace(
            project=project, trace_id=f"{prefix}-{i:05d}", input=f"question {i}", output=f"answer {i}",
            started_at=START + timedelta(seconds=i), experiment=experiment,
        )
        for i in range(n)
    )  # fmt: skip


@pytest.fixture
def acme(actors):
    batch = [run_payload(f"v1-{i:03d}", experiment="v1") for i in range(55)]
    batch += [run_payload(f"v2-{i:03d}", experiment="v2") for i in range(5)]
    assert actors.api().post("/v1/api/traces", {"traces": batch}, format="json").status_code == 201
    Dataset.objects.create(project=actors.acme, name="reservo")
    return actors


def _client(user):
    client = Client()
    client.force_login(user)
    return client


def _capture(client, query, **fields):
    data = {"dataset": "reservo", "all_matching": "on", **fields}
    return client.post(f"/p/acme/runs/?{query}", data)


def _message(response):
    return " ".join(str(m) for m in get_messages(response.wsgi_request))


def _cases(name="reservo"):
    return set(GoldenCase.objects.filter(dataset__name=name).values_list("source_trace_id", flat=True))


def test_the_list_offers_every_matching_run_when_the_filter_matches_more_than_a_page(acme):
    html = _client(acme.bob).get("/p/acme/runs/?experiment=v1").content.decode()
    assert 'name="all_matching"' in html and "Select all <strong>55</strong> runs matching this filter" in html
    assert 'action="?experiment=v1"' in html
    small = _client(acme.bob).get("/p/acme/runs/?experiment=v2").content.decode()
    assert 'name="all_matching"' not in small  # the page already holds every match


def test_it_captures_every_run_the_filter_matches_and_ignores_the_ticked_ids(acme):
    response = _capture(_client(acme.bob), "experiment=v1&sort=latency&page=2", trace_ids=["v2-000", "v2-001"])
    assert response.status_code == 302, response.content.decode()
    assert response["Location"] == "/p/acme/datasets/reservo/"
    assert _cases() == {f"v1-{i:03d}" for i in range(55)}
    assert "All 55 runs matching the filter: captured 55 runs into reservo: v1-000, v1-001" in _message(response)
    case = GoldenCase.objects.get(dataset__name="reservo", source_trace_id="v1-007")
    assert case.expected_output is None and case.source_run.trace_id == "v1-007"


def test_capturing_again_skips_the_runs_already_captured_and_counts_them(acme):
    client = _client(acme.bob)
    ticked = client.post(
        "/p/acme/runs/?experiment=v1", {"dataset": "reservo", "trace_ids": ["v1-000", "v1-001", "v1-002"]}
    )
    assert ticked.status_code == 302
    response = _capture(client, "experiment=v1")
    assert "captured 52 runs into reservo: v1-003, " in _message(response)
    assert "Already a case in reservo, no twin created: v1-000 (case v1-000), v1-001 (case v1-001)" in _message(
        response
    )
    assert GoldenCase.objects.filter(dataset__name="reservo").count() == 55
    again = _capture(client, "experiment=v1")
    assert "captured 0 runs into reservo." in _message(again) and "and 35 more." in _message(again)
    assert GoldenCase.objects.filter(dataset__name="reservo").count() == 55


def test_it_captures_more_runs_than_one_api_request_takes_in_one_call(actors):
    _runs(actors.acme, "bulk", 700)
    response = _capture(_client(actors.bob), "", dataset="", new_dataset="big")
    assert response.status_code == 302
    assert len(_cases("big")) == 700
    assert "All 700 runs matching the filter: captured 700 runs into big: bulk-00000" in _message(response)


def test_it_refuses_a_filter_matching_more_than_the_limit_and_writes_nothing(actors):
    _runs(actors.acme, "many", ALL_MATCHING_MAX + 1)
    response = _capture(_client(actors.bob), "text=", dataset="", new_dataset="huge")
    html = response.content.decode()
    assert response.status_code == 400
    assert f"{ALL_MATCHING_MAX + 1:,} runs match this filter, and at most {ALL_MATCHING_MAX:,} can be captured" in html
    assert not Dataset.objects.filter(name="huge").exists() and not GoldenCase.objects.exists()


def test_a_filter_with_an_error_captures_nothing(acme):
    response = _capture(_client(acme.bob), "since=not-a-date")
    assert response.status_code == 400
    assert "The filter has an error" in response.content.decode()
    assert not GoldenCase.objects.exists()


def test_with_answers_as_expected_the_runs_that_failed_a_check_are_skipped(acme):
    scored = acme.api().post("/v1/api/score", {"scorers": ["contains"], "config": {"contains": {"value": "75"}},
                                                "trace_ids": ["v1-003", "v1-004"]}, format="json")  # fmt: skip
    assert scored.status_code == 200
    acme.api().post(
        "/v1/api/score", {"scorers": ["contains"], "config": {"contains": {"value": "nope"}}, "trace_ids": ["v1-005"]},
        format="json",
    )  # fmt: skip
    response = _capture(_client(acme.bob), "experiment=v1", use_output_as_expected="on")
    assert "captured 54 runs" in _message(response) and "v1-005 (contains)" in _message(response)
    assert "v1-005" not in _cases()


def test_a_viewer_gets_403_and_an_outsider_404(acme):
    assert _capture(_client(acme.victor), "experiment=v1").status_code == 403
    assert _capture(_client(acme.charlie), "experiment=v1").status_code == 404
    assert not GoldenCase.objects.exists()


def test_when_every_run_failed_a_check_each_is_reported_skipped_and_nothing_is_written(acme):
    failed = acme.api().post(
        "/v1/api/score",
        {
            "scorers": ["contains"],
            "config": {"contains": {"value": "nope"}},
            "trace_ids": [f"v2-{i:03d}" for i in range(5)],
        },
        format="json",
    )
    assert failed.status_code == 200
    response = _capture(
        _client(acme.bob), "experiment=v2", dataset="", new_dataset="fresh", use_output_as_expected="on"
    )
    assert response.status_code == 302 and response["Location"] == "/p/acme/runs/?experiment=v2"
    text = _message(response)
    assert "captured 0 runs into fresh." in text
    skipped = ", ".join(f"v2-{i:03d} (contains)" for i in range(5))
    assert (
        f"Skipped 5 runs that failed a check, whose answers would become the reference of their own failure: {skipped}."
        in text
    )
    assert "Tick 'Take the answer even if the run failed a check' to capture them anyway." in text
    assert "accept_failed_output" not in text and "trace_ids" not in text
    assert not Dataset.objects.filter(name="fresh").exists() and not GoldenCase.objects.exists()
