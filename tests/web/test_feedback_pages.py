"""End users' feedback on the pages: a Feedback section on the run page, a feedback filter on the runs list."""

import pytest
from django.test import Client

from tests.factories import trace_create


@pytest.fixture
def given(actors):
    for trace_id in ("liked", "disliked", "silent"):
        trace_create(actors.acme, trace_id)
    widget = actors.ci_api(("feedback",))
    for trace_id, body in (
        ("liked", {"name": "thumbs", "value": True, "user_id": "u-1"}),
        ("disliked", {"name": "thumbs", "value": False, "comment": "booked the wrong room", "user_id": "u-2"}),
        ("disliked", {"name": "reason", "value": "wrong_room"}),
    ):
        assert widget.post(f"/v1/api/traces/{trace_id}/feedback", body, format="json").status_code == 202
    client = Client()
    client.force_login(actors.victor)
    return client


def _section(html):
    return html.split('id="feedback"')[1].split("<h2")[0]


def test_the_run_page_lists_each_feedback_with_its_value_comment_and_user(given):
    section = _section(given.get("/p/acme/runs/disliked/").content.decode())
    assert "booked the wrong room" in section and "u-2" in section
    assert '<span class="badge fail">false</span>' in section
    assert "<td>reason</td>" in section and '<span class="badge">wrong_room</span>' in section
    assert "anonymous" in section


def test_feedback_is_not_counted_among_the_runs_checks(given):
    html = given.get("/p/acme/runs/disliked/").content.decode()
    assert "feedback:thumbs" not in html.split('id="feedback"')[0]


def test_a_run_without_feedback_says_so(given):
    assert "No feedback from end users" in _section(given.get("/p/acme/runs/silent/").content.decode())


@pytest.mark.parametrize(
    ("spec", "runs"),
    [("thumbs:false", {"disliked"}), ("thumbs:true", {"liked"}), ("thumbs:any", {"liked", "disliked"}),
     ("reason:wrong_room", {"disliked"}), ("reason:too_slow", set())],
)  # fmt: skip
def test_the_runs_list_and_the_api_filter_by_feedback_alike(actors, given, spec, runs):
    html = given.get("/p/acme/runs/", {"feedback": spec}).content.decode()
    assert {t for t in ("liked", "disliked", "silent") if f"/p/acme/runs/{t}/" in html} == runs
    listed = actors.api().get("/v1/api/traces", {"feedback": spec}).json()["results"]
    assert {r["trace_id"] for r in listed} == runs


def test_a_reviewer_saves_a_queue_of_the_runs_users_disliked(actors, given):
    reviewer = Client()
    reviewer.force_login(actors.bob)
    response = reviewer.post("/p/acme/queue/", {"name": "thumbs down", "kind": "runs", "feedback": "thumbs:false"})
    assert response.status_code == 302, response.content
    assert "feedback thumbs:false" in reviewer.get("/p/acme/queue/").content.decode()


def test_a_run_with_only_feedback_reads_not_scored_in_the_runs_list(given):
    html = given.get("/p/acme/runs/", {"feedback": "thumbs:false"}).content.decode()
    row = html.split("/p/acme/runs/disliked/")[1].split("</tr>")[0]
    assert "not scored" in row
