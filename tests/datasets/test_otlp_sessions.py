"""Session, user and conversation of OpenTelemetry runs: stored on the run, filtered in the API and the runs page."""

from django.test import Client
from django.urls import reverse

from datasets.models import Trace
from tests.datasets.test_otlp_mapping import MS, T0, protobuf_body, sdk_spans


def conversation_turn(question, *, session=None, user=None, conversation=None, resource_conversation=None):
    """One turn of a chat agent: the session on the root, the user only on the model call (as some SDKs do)."""

    def build(tracer):
        root_attrs = {"openinference.span.kind": "AGENT", "input.value": question, "output.value": "ok"}
        if session:
            root_attrs["session.id"] = session
        with tracer.start_as_current_span("agent", start_time=T0, end_on_exit=False, attributes=root_attrs) as root:
            call = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o-mini"}
            if user:
                call["user.id"] = user
            if conversation:
                call["gen_ai.conversation.id"] = conversation
            with tracer.start_as_current_span("chat", start_time=T0 + MS, end_on_exit=False, attributes=call) as s:
                s.end(end_time=T0 + 2 * MS)
            root.end(end_time=T0 + 3 * MS)

    resource = {"service.name": "reservo"}
    if resource_conversation:
        resource["gen_ai.conversation.id"] = resource_conversation
    return sdk_spans(build, resource=resource)


def _send(actors, spans, key=None):
    response = Client().post(
        "/v1/traces",
        data=protobuf_body(spans),
        content_type="application/x-protobuf",
        headers={"Authorization": f"Bearer {key or actors.acme_key}"},
    )
    assert response.status_code == 200
    return Trace.objects.get(trace_id=format(spans[0].context.trace_id, "032x"))


def test_a_run_keeps_its_session_user_and_conversation_wherever_the_spans_carry_them(actors):
    run = _send(actors, conversation_turn("hi", session="s-42", user="u-7", conversation="c-1"))
    assert (run.session_id, run.user_id, run.conversation_id) == ("s-42", "u-7", "c-1")
    from_resource = _send(actors, conversation_turn("again", resource_conversation="c-9"))
    assert (from_resource.session_id, from_resource.user_id, from_resource.conversation_id) == (None, None, "c-9")
    detail = actors.api().get(f"/v1/api/traces/{run.trace_id}").json()
    assert (detail["session_id"], detail["user_id"], detail["conversation_id"]) == ("s-42", "u-7", "c-1")


def test_the_runs_api_lists_one_sessions_runs(actors):
    first = _send(actors, conversation_turn("first", session="s-42", user="u-7"))
    second = _send(actors, conversation_turn("second", session="s-42", user="u-8", conversation="c-2"))
    _send(actors, conversation_turn("other", session="s-43", user="u-7"))
    api = actors.api()

    def ids(**query):
        response = api.get("/v1/api/traces", query)
        assert response.status_code == 200
        return {r["trace_id"] for r in response.json()["results"]}

    assert ids(session="s-42") == {first.trace_id, second.trace_id}
    assert ids(session="s-42", user="u-7") == {first.trace_id}
    assert ids(conversation="c-2") == {second.trace_id}
    assert ids(session="nobody") == set()
    assert actors.outsider_api().get("/v1/api/traces", {"session": "s-42"}).json()["results"] == []
    assert api.get("/v1/api/traces", {"session": "x" * 201}).status_code == 400


def test_the_runs_page_filters_by_session_and_the_run_page_links_to_it(actors):
    mine = _send(actors, conversation_turn("first", session="s-42"))
    other = _send(actors, conversation_turn("other", session="s-43"))
    browser = Client()
    browser.force_login(actors.alice)
    page = browser.get(reverse("runs", args=[actors.acme.slug]), {"session": "s-42"}).content.decode()
    assert mine.trace_id in page and other.trace_id not in page
    detail = browser.get(reverse("run", args=[actors.acme.slug, mine.trace_id])).content.decode()
    assert "?session=s-42" in detail
