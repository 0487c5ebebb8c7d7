"""End users' feedback: a score source of its own, kept until its run arrives, one per (run, name, user)."""

from datetime import timedelta

import pytest
from django.utils import timezone

from evalsite.errors import Invalid
from evalsite.models import Project
from scoring.feedback import feedback_attach, feedback_pending_sweep
from scoring.models import PendingFeedback, Score
from scoring.review.queue import queue_candidates, queue_filter_create
from tests.factories import run_payload, trace_create


@pytest.fixture
def widget(actors):
    """A client holding a feedback-only key, as a web page would."""
    return actors.ci_api(("feedback",))


def _send(api, trace_id, **body):
    return api.post(f"/v1/api/traces/{trace_id}/feedback", body, format="json")


def _feedback():
    return {s.scorer: s for s in Score.objects.filter(source="feedback")}


def test_it_stores_a_thumbs_down_as_a_failing_feedback_score(actors, widget):
    trace_create(actors.acme, "r1")
    response = _send(widget, "r1", name="thumbs", value=False, comment="wrong room", user_id="u-7")
    assert (response.status_code, response.json()) == (202, {"accepted": True})
    score = _feedback()["feedback:thumbs"]
    assert (score.value, score.passed, score.reason) == (0.0, False, "wrong room")
    assert (score.detail["value"], score.detail["kind"], score.detail["user_id"]) == (False, "boolean", "u-7")


def test_it_clamps_a_number_and_keeps_it_as_sent(actors, widget):
    trace_create(actors.acme, "r1")
    _send(widget, "r1", name="stars", value=0.75)
    _send(widget, "r1", name="rating", value=4)
    scores = _feedback()
    assert (scores["feedback:stars"].value, scores["feedback:stars"].passed) == (0.75, True)
    assert (scores["feedback:rating"].value, scores["feedback:rating"].detail["value"]) == (1.0, 4)


def test_it_keeps_a_category_without_passing_or_failing_the_run(actors, widget):
    trace_create(actors.acme, "r1")
    _send(widget, "r1", name="reason", value="too_slow")
    score = _feedback()["feedback:reason"]
    assert (score.value, score.passed, score.detail["value"], score.detail["kind"]) == (
        0.5,
        True,
        "too_slow",
        "category",
    )


def test_the_newest_feedback_of_a_user_replaces_the_older_and_a_retry_changes_nothing(actors, widget):
    trace_create(actors.acme, "r1")
    _send(widget, "r1", name="thumbs", value=True, user_id="u-1")
    _send(widget, "r1", name="thumbs", value=False, user_id="u-1")
    first = Score.objects.get(source="feedback", detail__user_id="u-1")
    assert _send(widget, "r1", name="thumbs", value=False, user_id="u-1").status_code == 202
    assert Score.objects.get(source="feedback", detail__user_id="u-1").detail == first.detail
    _send(widget, "r1", name="thumbs", value=True, user_id="u-2")
    assert sorted(Score.objects.filter(source="feedback").values_list("detail__user_id", "passed")) == [
        ("u-1", False),
        ("u-2", True),
    ]


def test_feedback_on_a_run_not_arrived_yet_is_kept_and_attached_when_it_is_ingested(actors, widget):
    assert _send(widget, "later", name="thumbs", value=False, user_id="u-1").status_code == 202
    assert PendingFeedback.objects.filter(trace_id="later").count() == 1
    assert not Score.objects.filter(source="feedback").exists()
    assert actors.api().post("/v1/api/traces", run_payload("later"), format="json").status_code == 201
    score = _feedback()["feedback:thumbs"]
    assert (score.trace.trace_id, score.passed, score.detail["user_id"]) == ("later", False, "u-1")
    assert not PendingFeedback.objects.exists()


def test_pending_feedback_is_attached_to_a_run_arriving_by_otlp(actors, widget):
    trace_id = "5b8efff798038103d269b633813fc60c"
    _send(widget, trace_id, name="thumbs", value=True)
    span = {
        "traceId": trace_id, "spanId": "eee19b7ec3c1b174", "name": "chat", "kind": 2,
        "startTimeUnixNano": "1700000000000000000", "endTimeUnixNano": "1700000001000000000",
    }  # fmt: skip
    body = {"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}
    assert actors.api().post("/v1/traces", body, format="json").status_code == 200
    assert _feedback()["feedback:thumbs"].trace.trace_id == trace_id


def test_the_newest_pending_feedback_wins_and_attaching_twice_writes_once(actors, widget):
    _send(widget, "later", name="thumbs", value=True, user_id="u-1")
    _send(widget, "later", name="thumbs", value=False, user_id="u-1")
    trace_create(actors.acme, "later")
    assert feedback_attach(project=actors.acme, trace_ids=["later"]) == 1
    assert feedback_attach(project=actors.acme, trace_ids=["later"]) == 0
    assert [s.passed for s in Score.objects.filter(source="feedback")] == [False]


def test_new_feedback_counts_against_the_quota_and_a_retry_does_not(actors, widget):
    Project.objects.filter(pk=actors.acme.pk).update(quota_per_minute=1)
    assert _send(widget, "later", name="thumbs", value=True).status_code == 202
    assert _send(widget, "later", name="thumbs", value=True).status_code == 202
    response = _send(widget, "later", name="stars", value=1)
    assert response.status_code == 429 and "Retry-After" in response
    assert PendingFeedback.objects.count() == 1


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"value": True}, "name"),
        ({"name": "", "value": True}, "name"),
        ({"name": "x" * 101, "value": True}, "name"),
        ({"name": "thumbs"}, "value"),
        ({"name": "thumbs", "value": None}, "value"),
        ({"name": "thumbs", "value": [1]}, "value"),
        ({"name": "thumbs", "value": "x" * 101}, "value"),
        ({"name": "thumbs", "value": True, "comment": "x" * 2001}, "comment"),
        ({"name": "thumbs", "value": True, "user_id": 7}, "user_id"),
        ({"name": "thumbs", "value": True, "user_id": "x" * 201}, "user_id"),
        ({"name": "thumbs", "value": True, "score": 1}, "score"),
    ],
)
def test_bad_feedback_is_a_400_naming_the_field_and_writes_nothing(actors, widget, body, field):
    trace_create(actors.acme, "r1")
    response = widget.post("/v1/api/traces/r1/feedback", body, format="json")
    assert response.status_code == 400, response.content
    assert [e["field"] for e in response.json()["errors"]] == [field]
    assert not Score.objects.filter(source="feedback").exists()


def test_a_trace_id_too_long_to_store_is_a_400_naming_it(actors, widget):
    response = _send(widget, "t" * 201, name="thumbs", value=True)
    assert response.status_code == 400 and response.json()["errors"][0]["field"] == "trace_id"


def test_only_a_feedback_or_admin_key_sends_feedback(actors):
    trace_create(actors.acme, "r1")
    for scopes in (("ingest", "gate"), ("label",), ("curate",)):
        response = _send(actors.ci_api(scopes), "r1", name="thumbs", value=True)
        assert (response.status_code, response.json()["required_scope"]) == (403, "feedback"), scopes
    assert _send(actors.api(), "r1", name="thumbs", value=True).status_code == 202


def test_an_outsiders_feedback_lands_in_its_own_project_never_on_acmes_run(actors):
    trace_create(actors.acme, "r1")
    assert _send(actors.outsider_api(), "r1", name="thumbs", value=False).status_code == 202
    assert not Score.objects.filter(source="feedback").exists()
    assert PendingFeedback.objects.get().project == actors.umbrella


def test_a_run_committed_while_its_feedback_was_being_kept_still_gets_it(
    actors, widget, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False) as after_commit:
        _send(widget, "race", name="thumbs", value=True)
    # The run lands between the feedback's check and its commit: the ingestion saw nothing pending.
    trace_create(actors.acme, "race")
    for callback in after_commit:
        callback()
    assert _feedback()["feedback:thumbs"].trace.trace_id == "race"
    assert not PendingFeedback.objects.exists()


def test_a_queue_holds_the_runs_with_a_feedback_and_a_bad_spec_is_named(actors, widget):
    trace_create(actors.acme, "liked")
    trace_create(actors.acme, "disliked")
    _send(widget, "liked", name="thumbs", value=True)
    _send(widget, "disliked", name="thumbs", value=False)
    queue = queue_filter_create(project=actors.acme, data={"name": "thumbs down", "feedback": "thumbs:false"})
    assert list(queue_candidates(queue).values_list("trace_id", flat=True)) == ["disliked"]
    with pytest.raises(Invalid) as raised:
        queue_filter_create(project=actors.acme, data={"name": "bad", "feedback": "thumbs"})
    assert [e["field"] for e in raised.value.errors] == ["feedback"]


def test_the_openapi_description_documents_the_feedback_operation(actors):
    schema = actors.api().get("/v1/api/schema/", HTTP_ACCEPT="application/json").json()
    operation = schema["paths"]["/v1/api/traces/{trace_id}/feedback"]["post"]
    assert operation["x-required-scope"] == "feedback"
    assert {"202", "400", "401", "403", "429"} <= set(operation["responses"])
    assert operation["responses"]["202"]["content"]["application/json"]["schema"]["$ref"].endswith("FeedbackAccepted")
    request = schema["components"]["schemas"]["FeedbackInRequest"]
    assert request["required"] == ["name", "value"]
    assert request["properties"]["name"]["maxLength"] == 100
    assert {v["type"] for v in request["properties"]["value"]["oneOf"]} == {"boolean", "number", "string"}


def test_the_sweep_attaches_feedback_left_behind_and_drops_what_waited_too_long(actors, widget):
    _send(widget, "landed", name="thumbs", value=False)
    _send(widget, "never", name="thumbs", value=True)
    trace_create(actors.acme, "landed")  # as if the process stopped before attaching
    assert feedback_pending_sweep() == (1, 0)
    assert _feedback()["feedback:thumbs"].trace.trace_id == "landed"
    assert feedback_pending_sweep(now=timezone.now() + timedelta(days=8)) == (0, 1)
    assert not PendingFeedback.objects.exists()


def test_a_name_of_the_full_hundred_characters_is_stored(actors, widget):
    trace_create(actors.acme, "r1")
    assert _send(widget, "r1", name="n" * 100, value=True).status_code == 202
    assert Score.objects.get(source="feedback").scorer == "feedback:" + "n" * 100
