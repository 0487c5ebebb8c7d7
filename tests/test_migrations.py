"""A database populated on the schema before the layers were made one-way migrates with every row.

Experiment moved from ``experiments`` to ``datasets`` and JudgeConfig from ``evalsite``
to ``scoring`` with their tables; the stale flag became a run revision. The test fills
every table on the old schema through the historical models, migrates to the newest
schema, and reads each row back through today's models.
"""

from decimal import Decimal

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from scoring.freshness import score_is_stale

OLD = [
    ("evalsite", "0002_judgeconfig"),
    ("datasets", "0003_case_indexes_and_checks"),
    ("experiments", "0002_gate"),
    ("scoring", "0003_chunk_claimed_by"),
]


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


def _latest():
    executor = MigrationExecutor(connection)
    return [key for key in executor.loader.graph.leaf_nodes() if key[0] in {app for app, _ in OLD}]


def _populate(apps):
    """One row of each table, linked the way the app links them; returns their primary keys."""
    now = timezone.now()
    m = {name: apps.get_model(app, name) for app, name in [
        ("auth", "User"), ("evalsite", "Project"), ("evalsite", "ApiKey"), ("evalsite", "Membership"),
        ("evalsite", "JudgeConfig"), ("evalsite", "QuotaWindow"), ("evalsite", "Heartbeat"),
        ("datasets", "Dataset"), ("datasets", "Trace"), ("datasets", "Span"), ("datasets", "GoldenCase"),
        ("datasets", "CaseRevision"), ("experiments", "Experiment"), ("experiments", "GatePolicy"),
        ("experiments", "FloorChange"), ("experiments", "GateRun"), ("scoring", "Score"), ("scoring", "Abstention"),
        ("scoring", "ScoringPass"), ("scoring", "ScoringChunk"),
    ]}  # fmt: skip
    user = m["User"].objects.create(username="old-alice")
    project = m["Project"].objects.create(slug="old", name="Old")
    key = m["ApiKey"].objects.create(project=project, name="ci", prefix="oldprefix", secret_hash="0" * 64)
    m["Membership"].objects.create(user=user, project=project, role="admin")
    m["JudgeConfig"].objects.create(project=project, endpoint="http://judge", model="m1", criteria={"c": "q?"})
    m["QuotaWindow"].objects.create(project=project, window_start=now, used=3)
    m["Heartbeat"].objects.create(hostname="worker@old", seen_at=now)
    dataset = m["Dataset"].objects.create(project=project, name="reservo")
    experiment = m["Experiment"].objects.create(project=project, name="v1", dataset=dataset, metadata={"sha": "a"})
    case = m["GoldenCase"].objects.create(dataset=dataset, name="quote", expectations={"contains": "EUR"})
    m["CaseRevision"].objects.create(case=case, version=1, action="created", changed_by_key=key, new={"name": "quote"})
    runs = [
        m["Trace"].objects.create(
            project=project, trace_id=f"old-{i}", output="75 EUR", started_at=now, experiment=experiment, case=case,
            cost_cents=Decimal("0.5"),
        )
        for i in range(2)
    ]  # fmt: skip
    m["Span"].objects.create(trace=runs[0], span_id="s1", kind="tool", name="quote_room")
    scoring_pass = m["ScoringPass"].objects.create(project=project, scorers=["contains"], total=2)
    m["ScoringChunk"].objects.create(scoring_pass=scoring_pass, ordinal=0, trace_pks=[r.pk for r in runs], runs=2)
    for run, stale in zip(runs, (False, True), strict=True):
        m["Score"].objects.create(
            project=project, trace=run, scorer="contains", config_hash="h", config={"value": "EUR"}, value=1.0,
            passed=True, experiment=experiment, case=case, scoring_pass=scoring_pass, stale=stale,
        )  # fmt: skip
    m["Abstention"].objects.create(
        project=project, trace=runs[0], scorer="exact_match", reason="no_expected_output", experiment=experiment
    )
    policy = m["GatePolicy"].objects.create(dataset=dataset, baseline=experiment, min_pass_rate=0.8)
    gate_run = m["GateRun"].objects.create(
        project=project, dataset=dataset, experiment=experiment, baseline=experiment, verdict="PASS"
    )
    m["FloorChange"].objects.create(policy=policy, old_floor=0.5, new_floor=0.8, source="ratchet", gate_run=gate_run)
    return {"project": project.pk, "experiment": experiment.pk, "runs": [r.pk for r in runs], "gate_run": gate_run.pk}


@pytest.mark.django_db(transaction=True)
def test_a_database_on_the_old_schema_migrates_with_every_row():
    latest = _latest()
    try:
        pks = _populate(_migrate(OLD))
        apps = _migrate(latest)
    finally:
        _migrate(_latest())

    from datasets.models import Experiment, Trace
    from evalsite.models import ApiKey, Heartbeat, Membership, Project, QuotaWindow
    from gating.models import FloorChange, GatePolicy, GateRun
    from scoring.models import Abstention, JudgeConfig, Score, ScoreConfig, ScoringChunk, ScoringPass
    from scoring.score_configs import score_configs_of

    assert apps.get_model("datasets", "Experiment")._meta.db_table == "experiments_experiment"
    project = Project.objects.get(pk=pks["project"])
    experiment = Experiment.objects.get(pk=pks["experiment"])
    assert (experiment.name, experiment.dataset.name, experiment.metadata) == ("v1", "reservo", {"sha": "a"})
    runs = list(Trace.objects.filter(pk__in=pks["runs"]).order_by("trace_id"))
    assert [r.experiment for r in runs] == [experiment, experiment]
    assert [r.case.name for r in runs] == ["quote", "quote"]
    assert runs[0].spans.get().name == "quote_room"
    assert project.judge_config.model == "m1" and JudgeConfig.objects.count() == 1
    fresh, stale = (Score.objects.get(trace=run) for run in runs)
    assert (score_is_stale(fresh, runs[0]), score_is_stale(stale, runs[1])) == (False, True)
    assert fresh.experiment == experiment and Abstention.objects.get().experiment == experiment
    # Two scores with one config: it is stored once, for the project.
    assert score_configs_of(project_id=project.pk, hashes=["h"]) == {"h": {"value": "EUR"}}
    assert ScoreConfig.objects.count() == 1
    gate_run = GateRun.objects.get(pk=pks["gate_run"])
    assert (gate_run.experiment, gate_run.baseline) == (experiment, experiment)
    assert GatePolicy.objects.get().baseline == experiment and FloorChange.objects.get().gate_run == gate_run
    assert ScoringChunk.objects.get().trace_pks == pks["runs"] and ScoringPass.objects.count() == 1
    assert ApiKey.objects.count() == Membership.objects.count() == QuotaWindow.objects.count() == 1
    assert ApiKey.objects.get().full_access, "a key made before scopes keeps full access"
    assert Heartbeat.objects.get().hostname == "worker@old"
    assert experiment.gate_runs.get() == gate_run and list(experiment.traces.order_by("trace_id")) == runs
