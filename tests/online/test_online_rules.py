"""Online rules: arriving runs that match are sampled deterministically and scored by workers, once each."""

import pytest

from online.models import OnlineRule, OnlineSample
from online.rules import rule_backfill, rule_tick, rules_tick, sample_takes
from scoring.models import Score, ScoringChunk
from scoring.passes.services import chunk_score, pass_plan
from tests.factories import run_payload, trace_create

RULES = "/v1/api/online-rules"


def _work(scoring_pass_ids):
    """Do what the workers do with the rule's passes: plan each, then score its chunks."""
    for pass_id in scoring_pass_ids:
        pass_plan(pass_id=pass_id)
        for chunk in ScoringChunk.objects.filter(scoring_pass_id=pass_id).order_by("ordinal"):
            chunk_score(chunk_id=chunk.pk, token=f"task-{chunk.pk}")


def _passes(rule):
    return set(
        OnlineSample.objects.filter(rule=rule, scoring_pass__isnull=False).values_list("scoring_pass", flat=True)
    )


def _rule(actors, **body):
    response = actors.api().post(RULES, {"name": "prod", "scorers": ["no_errors"], **body}, format="json")
    assert response.status_code == 201, response.content
    return OnlineRule.objects.get(pk=response.json()["id"])


def test_runs_that_arrive_and_match_are_scored_once(actors):
    trace_create(actors.acme, "before-the-rule")
    rule = _rule(actors, filter={"name": "pharmacy", "experiment": "none", "tags": ["prod"]})
    actors.api().post(
        "/v1/api/traces",
        {"traces": [
            run_payload("p-1", name="pharmacy", tags=["prod", "eu"]),
            run_payload("p-2", name="pharmacy", tags=["prod"], status="error", error="timeout"),
            run_payload("p-3", name="pharmacy", tags=["staging"]),
            run_payload("p-4", name="other", tags=["prod"]),
            run_payload("p-5", name="pharmacy", tags=["prod"], experiment="v1"),
        ]},
        format="json",
    )  # fmt: skip
    assert rule_tick(rule_id=rule.pk) == (2, 2)
    assert rule_tick(rule_id=rule.pk) == (0, 0)  # seen runs are not counted twice
    _work(_passes(rule))
    scores = dict(Score.objects.filter(scorer="no_errors").values_list("trace__trace_id", "passed"))
    assert scores == {"p-1": True, "p-2": False}
    counts = actors.ci_api().get(f"{RULES}/{rule.pk}").json()["counts"]
    assert (counts["matched"], counts["sampled"], counts["scored"], counts["passes"]) == (2, 2, 2, 1)


def test_a_sample_rate_of_a_tenth_scores_about_a_tenth_the_same_runs_every_time(actors):
    rule = _rule(actors, sample_rate=0.1)
    ids = [f"prod-{i}" for i in range(2000)]
    for start in range(0, len(ids), 500):
        batch = [run_payload(t, spans=[]) for t in ids[start : start + 500]]
        assert actors.api().post("/v1/api/traces", {"traces": batch}, format="json").status_code == 201
    matched, sampled = rule_tick(rule_id=rule.pk)
    assert matched == 2000 and 160 <= sampled <= 240
    taken = set(OnlineSample.objects.filter(rule=rule, sampled=True).values_list("trace__trace_id", flat=True))
    assert taken == {t for t in ids if sample_takes(t, 0.1)}
    assert {t for t in ids if sample_takes(t, 0.1)} <= {t for t in ids if sample_takes(t, 0.2)}  # nested


def test_a_paused_rule_scores_nothing_until_resumed(actors):
    rule = _rule(actors, paused=True)
    trace_create(actors.acme, "while-paused")
    assert rules_tick() == 0
    assert actors.api().patch(f"{RULES}/{rule.pk}", {"paused": False}, format="json").status_code == 200
    assert rules_tick() == 1


def test_a_backfill_scores_older_runs_the_rule_did_not_see(actors):
    trace_create(actors.acme, "old-1", started_at="2026-11-01T10:00:00Z")
    trace_create(actors.acme, "old-2", started_at="2026-11-20T10:00:00Z")
    rule = _rule(actors)
    response = actors.api().post(
        f"{RULES}/{rule.pk}/backfill", {"from": "2026-11-10T00:00:00Z", "to": "2026-12-01T00:00:00Z"}, format="json"
    )
    assert response.status_code == 202
    from django.utils.dateparse import parse_datetime

    window = parse_datetime("2026-11-10T00:00:00Z"), parse_datetime("2026-12-01T00:00:00Z")
    assert rule_backfill(rule_id=rule.pk, started_from=window[0], started_to=window[1]) == (1, 1)
    assert rule_backfill(rule_id=rule.pk, started_from=window[0], started_to=window[1]) == (0, 0)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"sample_rate": 2}, "sample_rate"),
        ({"sample_rate": "half"}, "sample_rate"),
        ({"filter": {"tags": "prod"}}, "filter.tags"),
        ({"filter": {"colour": "red"}}, "filter.colour"),
        ({"scorers": ["no_such_scorer"]}, "scorers"),
        ({"name": ""}, "name"),
        ({"scorers": []}, "scorers"),
        ({"scorers": None}, "scorers"),
    ],
)
def test_bad_input_is_a_400_naming_the_field_and_writes_nothing(actors, body, field):
    response = actors.api().post(RULES, {"name": "prod", "scorers": ["no_errors"], **body}, format="json")
    assert response.status_code == 400, response.content
    assert any(e["field"].startswith(field) for e in response.json()["errors"]), response.json()
    assert not OnlineRule.objects.exists()


def test_a_ci_key_reads_rules_but_cannot_make_them_and_outsiders_see_none(actors):
    rule = _rule(actors)
    response = actors.ci_api().post(RULES, {"name": "x", "scorers": ["no_errors"]}, format="json")
    assert response.status_code == 403 and response.json()["required_scope"] == "curate"
    assert [r["name"] for r in actors.ci_api().get(RULES).json()["results"]] == ["prod"]
    assert actors.outsider_api().get(f"{RULES}/{rule.pk}").status_code == 404
    assert actors.outsider_api().get(RULES).json()["results"] == []


@pytest.mark.worker
def test_a_real_worker_scores_runs_sent_through_the_api_and_otlp_within_seconds(transactional_db, actors):
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    from tests.live import celery_worker, wait_for, web_server

    _rule(actors, scorers=["no_errors"])
    with web_server(workers=1) as url, celery_worker(env={"EVALSITE_ONLINE_TICK_SECONDS": "1"}):
        actors.api().post("/v1/api/traces", {"traces": [run_payload("api-1")]}, format="json")
        provider = TracerProvider(resource=Resource.create({"service.name": "pharmacy"}))
        exporter = OTLPSpanExporter(endpoint=f"{url}/v1/traces", headers={"Authorization": f"Bearer {actors.acme_key}"})
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        with provider.get_tracer("test").start_as_current_span("refill"):
            pass
        provider.shutdown()
        scored = wait_for(
            lambda: Score.objects.filter(scorer="no_errors").count() == 2 or None, timeout=60, what="online scores"
        )
    assert scored
