"""``evalsite.trial``: an OpenTelemetry run says which try of its case it is, as the runs API's ``trial`` does."""

import pytest
from django.test import Client
from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from datasets.models import Trace
from tests.datasets.test_otlp_mapping import MS, T0, protobuf_body, sdk_spans


def agent_run(*, root_trial=None, child_trial=None, resource_trial=None):
    def build(tracer):
        attrs = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "reservo", "evalsite.experiment": "v2"}
        if root_trial is not None:
            attrs["evalsite.trial"] = root_trial
        with tracer.start_as_current_span(
            "invoke_agent reservo", start_time=T0, end_on_exit=False, attributes=attrs
        ) as root:
            child = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o-mini"}
            if child_trial is not None:
                child["evalsite.trial"] = child_trial
            with tracer.start_as_current_span("chat", start_time=T0 + MS, end_on_exit=False, attributes=child) as s:
                s.end(end_time=T0 + 2 * MS)
            root.end(end_time=T0 + 3 * MS)

    resource = {"service.name": "reservo"}
    if resource_trial is not None:
        resource["evalsite.trial"] = resource_trial
    return sdk_spans(build, resource=resource)


def _send(actors, spans):
    response = Client().post(
        "/v1/traces",
        data=protobuf_body(spans),
        content_type="application/x-protobuf",
        headers={"Authorization": f"Bearer {actors.acme_key}"},
    )
    assert response.status_code == 200
    answer = json_format.MessageToDict(ExportTraceServiceResponse.FromString(response.content))
    run = Trace.objects.get(trace_id=format(spans[0].context.trace_id, "032x"))
    return run, answer.get("partialSuccess", {})


def test_a_resource_attribute_sets_the_trial_of_every_run_of_the_process(actors):
    # OTEL_RESOURCE_ATTRIBUTES=evalsite.trial=2 can only say text.
    run, partial = _send(actors, agent_run(resource_trial="2"))
    assert run.trial == 2 and partial == {}
    assert run.experiment.name == "v2"
    assert actors.api().get(f"/v1/api/traces/{run.trace_id}").json()["trial"] == 2


def test_the_root_spans_trial_wins_over_the_resources(actors):
    run, _ = _send(actors, agent_run(root_trial=3, resource_trial="2"))
    assert run.trial == 3


def test_without_one_on_the_root_the_earliest_span_that_has_it_is_used(actors):
    def build(tracer):
        with tracer.start_as_current_span("agent", start_time=T0, end_on_exit=False) as root:
            with tracer.start_as_current_span(
                "chat", start_time=T0 + MS, end_on_exit=False, attributes={"evalsite.trial": 4}
            ) as s:
                s.end(end_time=T0 + 2 * MS)
            root.end(end_time=T0 + 3 * MS)

    run, _ = _send(actors, sdk_spans(build))
    assert run.trial == 4


@pytest.mark.parametrize("bad", ["abc", 0, -1, True, 1.5, 10_001, "", [1, 2]])
def test_a_trial_that_is_not_one_is_a_warning_and_the_run_is_stored_without_it(actors, bad):
    run, partial = _send(actors, agent_run(root_trial=bad))
    assert run.trial is None and run.experiment.name == "v2"
    assert partial.get("rejectedSpans", "0") == "0"
    assert "evalsite.trial must be an integer from 1 to 10000" in partial["errorMessage"]
    assert run.trace_id in partial["errorMessage"]


def test_a_resent_run_with_another_trial_takes_the_new_one(actors):
    spans = agent_run(root_trial=1)
    run, _ = _send(actors, spans)
    assert run.trial == 1
    spans[0]._attributes = dict(spans[0].attributes) | {"evalsite.trial": 2}
    spans[1]._attributes = dict(spans[1].attributes) | {"evalsite.trial": 2}
    run, _ = _send(actors, spans)
    assert run.trial == 2
