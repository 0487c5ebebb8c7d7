"""``evalgate.feedback`` against a live server: the request a page would send, kept until its run arrives."""

import pytest

import evalgate
from evalsite.models import Project
from evalsite.projects import api_key_create
from scoring.models import Score
from tests.factories import run_payload


@pytest.fixture
def feedback_key(server):
    _, key = api_key_create(project=Project.objects.get(slug="client-e2e"), name="widget", scopes=["feedback"])
    return key


def test_it_sends_feedback_that_waits_for_its_run_and_lands_on_it(server, feedback_key):
    url, admin_key = server
    answer = evalgate.feedback(url, feedback_key, "run/1", "thumbs", False, comment="wrong room", user_id="u-1")
    assert answer == {"accepted": True}
    assert not Score.objects.filter(source="feedback").exists()
    evalgate.upload_runs(evalgate.Client(url, admin_key), [run_payload("run/1")])
    score = Score.objects.get(source="feedback")
    assert (score.trace.trace_id, score.scorer, score.passed, score.reason) == (
        "run/1",
        "feedback:thumbs",
        False,
        "wrong room",
    )


def test_a_client_given_another_key_sends_with_that_key(server, feedback_key):
    url, admin_key = server
    client = evalgate.Client(url, admin_key)
    evalgate.upload_runs(client, [run_payload("r1")])
    assert evalgate.feedback(client, feedback_key, "r1", "stars", 0.75)["accepted"] is True
    assert Score.objects.get(source="feedback").value == 0.75


def test_a_bad_value_is_an_api_error_naming_the_field(server, feedback_key):
    url, _ = server
    with pytest.raises(evalgate.ApiError) as raised:
        evalgate.feedback(url, feedback_key, "r1", "thumbs", [1])
    assert raised.value.status == 400
    assert raised.value.problem["errors"][0]["field"] == "value"


def test_a_key_without_the_feedback_scope_is_refused(server):
    url, _ = server
    _, ci_key = api_key_create(project=Project.objects.get(slug="client-e2e"), name="ci", scopes=["ingest", "gate"])
    with pytest.raises(evalgate.ApiError) as raised:
        evalgate.feedback(url, ci_key, "r1", "thumbs", True)
    assert (raised.value.status, raised.value.problem["required_scope"]) == (403, "feedback")
