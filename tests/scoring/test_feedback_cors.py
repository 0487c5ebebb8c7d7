"""Feedback from a browser: CORS for the project's listed origins only, and a rate limit per key and address."""

import json
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

import pytest
from django.test import override_settings

from evalsite.errors import RateLimited
from evalsite.models import Project
from evalsite.projects import api_key_create
from evalsite.rate_limits import rate_take
from scoring.models import Score
from tests.factories import trace_create
from tests.live import web_server

APP = "https://app.example.com"
PATH = "/v1/api/traces/r1/feedback"
THUMBS = {"name": "thumbs", "value": True}


@pytest.fixture
def widget(actors):
    Project.objects.filter(pk=actors.acme.pk).update(feedback_origins=[APP])
    trace_create(actors.acme, "r1")
    return actors.ci_api(("feedback",))


def _preflight(client, origin):
    return client.options(
        PATH,
        HTTP_ORIGIN=origin,
        HTTP_ACCESS_CONTROL_REQUEST_METHOD="POST",
        HTTP_ACCESS_CONTROL_REQUEST_HEADERS="authorization, content-type",
    )


def test_the_preflight_answers_a_listed_origin_without_a_key(actors, widget):
    response = _preflight(actors.api(key=""), APP)
    assert response.status_code == 204
    assert response["Access-Control-Allow-Origin"] == APP
    assert response["Access-Control-Allow-Methods"] == "POST"
    assert response["Access-Control-Allow-Headers"] == "Authorization, Content-Type"
    assert "Origin" in response["Vary"]


def test_the_preflight_refuses_an_origin_no_project_lists(actors, widget):
    response = _preflight(actors.api(key=""), "https://evil.example.com")
    assert response.status_code == 403
    assert "Access-Control-Allow-Origin" not in response
    assert response.json()["type"].endswith("/problems/origin-not-allowed")


def test_a_post_from_a_listed_origin_is_recorded_and_readable_by_the_page(actors, widget):
    response = widget.post(PATH, THUMBS, format="json", HTTP_ORIGIN=APP)
    assert response.status_code == 202
    assert response["Access-Control-Allow-Origin"] == APP
    assert "Retry-After" in response["Access-Control-Expose-Headers"]
    assert Score.objects.filter(source="feedback").count() == 1


def test_a_post_from_an_origin_the_keys_project_does_not_list_is_refused(actors, widget):
    # Listed by another project: the preflight passes, the key's project still says no.
    Project.objects.filter(pk=actors.umbrella.pk).update(feedback_origins=["https://other.example.com"])
    response = widget.post(PATH, THUMBS, format="json", HTTP_ORIGIN="https://other.example.com")
    assert response.status_code == 403
    assert response.json()["type"].endswith("/problems/origin-not-allowed")
    assert "Access-Control-Allow-Origin" not in response
    assert not Score.objects.filter(source="feedback").exists()


def test_an_error_answer_to_a_listed_origin_is_readable_by_the_page(actors, widget):
    response = widget.post(PATH, {"name": "thumbs"}, format="json", HTTP_ORIGIN=APP)
    assert response.status_code == 400
    assert response["Access-Control-Allow-Origin"] == APP


@override_settings(EVALSITE_FEEDBACK_PER_MINUTE=3)
def test_a_key_and_address_over_the_rate_limit_get_a_429_with_retry_after(actors, widget):
    for _ in range(3):
        assert widget.post(PATH, THUMBS, format="json").status_code == 202
    response = widget.post(PATH, THUMBS, format="json")
    assert response.status_code == 429
    assert response.json()["type"].endswith("/problems/rate-limited")
    assert 1 <= int(response["Retry-After"]) <= 60
    assert widget.post(PATH, THUMBS, format="json", REMOTE_ADDR="203.0.113.9").status_code == 202
    assert actors.ci_api(("feedback",)).post(PATH, THUMBS, format="json").status_code == 202


def test_the_rate_limit_opens_again_the_next_minute(db):
    minute = datetime(2026, 12, 2, 10, 0, 30, tzinfo=UTC)
    rate_take(bucket="b", limit=1, now=minute)
    with pytest.raises(RateLimited):
        rate_take(bucket="b", limit=1, now=minute)
    rate_take(bucket="b", limit=1, now=minute.replace(minute=1))


def test_a_page_of_the_site_itself_sends_feedback_without_being_listed(actors, widget):
    assert widget.post(PATH, THUMBS, format="json", HTTP_ORIGIN="http://testserver").status_code == 202


def test_the_rate_limit_holds_across_several_server_processes(transactional_db, actors, widget):
    _, key = api_key_create(project=actors.acme, name="page", scopes=["feedback"])
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}

    def send(url):
        request = urllib.request.Request(url + PATH, data=json.dumps(THUMBS).encode(), headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status
        except urllib.error.HTTPError as error:
            return error.code

    with web_server(workers=3, threads=4, env={"EVALSITE_FEEDBACK_PER_MINUTE": "20"}) as url:
        # Stay inside one minute: the burst takes a second or two.
        while datetime.now(UTC).second > 45:
            time.sleep(1)
        with ThreadPoolExecutor(max_workers=12) as pool:
            statuses = list(pool.map(send, [url] * 50))
    assert (statuses.count(202), statuses.count(429)) == (20, 30)
