"""Retention keeps exactly what it must: sources of cases, the gate's evidence, labelled runs."""

from datetime import timedelta

import pytest
from django.utils import timezone

from datasets.models import Dataset, Experiment, GoldenCase, Span, Trace
from gating.models import GatePolicy
from lifecycle.retention import retention_batch, retention_summary, retention_sweep
from scoring.models import Abstention, Score
from tests.factories import run_payload, trace_create

OLD = timezone.now() - timedelta(days=40)


def _old(project, trace_id, **fields):
    run = trace_create(project, trace_id, **fields)
    Trace.objects.filter(pk=run.pk).update(ingested_at=OLD)
    return run


def _label(run):
    Score.objects.create(
        project=run.project, trace=run, scorer="helpful", config_hash="h", value=1.0, passed=True, source="human"
    )


def _gated(actors):
    """An old run of experiment v1, evaluated by a gate; returns it."""
    api = actors.api()
    api.post("/v1/api/datasets", {"name": "g"}, format="json")
    api.post("/v1/api/datasets/g/cases", {"name": "c1", "input": "q"}, format="json")
    api.post("/v1/api/traces", run_payload("gated-run", experiment="v1", dataset="g", case="c1"), format="json")
    assert api.post("/v1/api/gate", {"dataset": "g", "experiment": "v1"}, format="json").status_code == 200
    Trace.objects.filter(trace_id="gated-run").update(ingested_at=OLD)
    return Trace.objects.get(trace_id="gated-run")


@pytest.fixture
def world(actors):
    acme = actors.acme
    acme.retention_days = 30
    acme.save()
    dataset = Dataset.objects.create(project=acme, name="d")
    expired = [_old(acme, f"expired-{i}") for i in range(5)]
    Score.objects.create(project=acme, trace=expired[0], scorer="answered", config_hash="x", value=1, passed=True)
    Abstention.objects.create(
        project=acme, trace=expired[0], scorer="exact_match", config_hash="x", kind="abstained", reason="r"
    )
    source = _old(acme, "source-fk")
    GoldenCase.objects.create(dataset=dataset, name="a", input="q", source_trace_id="source-fk", source_run=source)
    _old(acme, "source-by-id")
    GoldenCase.objects.create(dataset=dataset, name="b", input="q", source_trace_id="source-by-id")
    baseline = Experiment.objects.create(project=acme, name="base")
    GatePolicy.objects.create(dataset=dataset, baseline=baseline)
    _old(acme, "baseline-run", experiment="base")
    _label(_old(acme, "labelled"))
    trace_create(acme, "recent")
    _old(actors.umbrella, "other-project-old")
    return {"expired": expired, "gated": _gated(actors)}


def _left(project):
    return set(Trace.objects.filter(project=project).values_list("trace_id", flat=True))


def test_a_sweep_deletes_the_expired_runs_and_keeps_what_must_stay(actors, world):
    assert retention_sweep(batch_size=2) == {"acme": 5}
    assert _left(actors.acme) == {"source-fk", "source-by-id", "baseline-run", "labelled", "recent", "gated-run"}
    assert _left(actors.umbrella) == {"other-project-old"}
    expired_pks = [run.pk for run in world["expired"]]
    assert not Span.objects.filter(trace_id__in=expired_pks).exists()
    assert not Score.objects.filter(trace_id__in=expired_pks).exists()
    assert not Abstention.objects.filter(trace_id__in=expired_pks).exists()
    assert GoldenCase.objects.get(name="b").source_trace_id == "source-by-id"
    assert retention_sweep() == {}


def test_one_batch_deletes_at_most_its_size(actors, world):
    assert retention_batch(project=actors.acme, batch_size=2) == 2
    assert len(_left(actors.acme)) == 11 - 2


def test_a_project_without_retention_keeps_everything(actors, world):
    actors.acme.retention_days = None
    actors.acme.save()
    assert retention_sweep() == {}
    assert len(_left(actors.acme)) == 11


def test_the_summary_says_how_much_is_kept_and_why(actors, world):
    summary = retention_summary(actors.acme)
    assert (summary.retention_days, summary.total, summary.expired) == (30, 11, 10)
    assert summary.kept == {"golden case source": 2, "gate evidence": 2, "labelled": 1}


def test_the_datasets_page_says_what_is_kept_and_why(actors, world):
    from django.test import Client

    client = Client()
    client.force_login(actors.victor)
    page = client.get("/p/acme/datasets/").content.decode()
    assert "11 runs stored" in page and "kept 30 days" in page and "10 are older" in page
    assert "2 as golden case source, 2 as gate evidence, 1 as labelled" in page
