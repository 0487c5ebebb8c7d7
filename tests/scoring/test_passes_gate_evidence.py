"""The gate's evidence (``outcomes_ensure``) is scored and written by the same rules as a pass."""

from datasets.models import Dataset, GoldenCase, Trace
from scoring.models import Abstention, Score
from scoring.selection.outcomes import outcomes_ensure
from tests.factories import trace_create


def _linked_run(actors, trace_id="v1-quote", **expectations):
    dataset, _ = Dataset.objects.get_or_create(project=actors.acme, name="reservo")
    case = GoldenCase.objects.create(dataset=dataset, name=f"case-{trace_id}", expectations=expectations)
    run = trace_create(actors.acme, trace_id, dataset="reservo", case=case.name)
    return case, run


def test_it_reuses_stored_scores_and_replaces_stale_ones(actors):
    case, run = _linked_run(actors, expected_tools=["quote_room"])
    ask = {"project": actors.acme, "scorers_by_run": {run.pk: ["tool_choice"]}}
    outcomes, tools = outcomes_ensure(**ask)
    assert outcomes[(run.pk, "tool_choice")]["status"] == "passed"
    assert tools[run.pk] == ["quote_room"]
    first = Score.objects.get()

    outcomes_ensure(**ask)
    assert Score.objects.get().pk == first.pk

    Score.objects.update(passed=False, value=0.0)
    Trace.objects.filter(pk=run.pk).update(revision=2)  # the run changed since
    outcomes, _ = outcomes_ensure(**ask)
    assert outcomes[(run.pk, "tool_choice")]["status"] == "passed"
    replaced = Score.objects.get()
    assert replaced.pk != first.pk and replaced.run_revision == 2 and replaced.passed


def test_a_score_over_the_quota_is_reported_abstained_and_recorded(actors):
    case, run = _linked_run(actors, expected_tools=["quote_room"], latency_threshold_ms=5000)
    actors.acme.quota_per_minute = 1
    actors.acme.save()
    outcomes, _ = outcomes_ensure(
        project=actors.acme,
        scorers_by_run={run.pk: ["tool_choice", "latency_budget", "nope"]},
    )
    statuses = {scorer: o["status"] for (_, scorer), o in outcomes.items()}
    assert statuses == {"tool_choice": "passed", "latency_budget": "abstained", "nope": "abstained"}
    assert outcomes[(run.pk, "latency_budget")]["reason"] == "quota"
    assert outcomes[(run.pk, "nope")]["reason"] == "unknown_scorer"
    assert Score.objects.count() == 1
    assert Abstention.objects.get().reason == "quota"
