"""Score summaries: compare reads the same figures from them as from the scores, and no
change to an experiment's scores or runs leaves an old summary standing.
"""

import random
import threading
import time

import pytest
from django.db import connection, transaction

from datasets.models import Dataset, Experiment, GoldenCase, Trace
from gating.comparison import experiments_compare
from scoring.models import Score
from scoring.passes.services import chunk_score, pass_plan, pass_start
from scoring.passes.summaries import LOCK_CLASS, summaries_build, summaries_stats, summary_build, summary_flipped_rows
from scoring.score_configs import score_configs_store
from scoring.tasks import summaries_build_task
from tests.factories import trace_create
from tests.scoring.races import in_thread, until_a_session_waits

pytestmark = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="summaries are kept on PostgreSQL (DATABASE_URL)"
)

CONFIGS = {"h": "{}", "s1": '{"schema": {"type": "object"}}', "s2": '{"schema": {"type": "array"}}'}


def _score(run, experiment, scorer, config, passed, *, value=None):
    return Score(
        project=run.project, trace=run, experiment=experiment, case_id=run.case_id, scorer=scorer,
        config_hash=config, value=float(passed) if value is None else value, passed=passed,
    )  # fmt: skip


def _experiment_scored(actors, rng, experiment, cases):
    """Runs of ``experiment`` (one to three trials a case, some without a case), scored several ways."""
    scores = []
    for i, case in enumerate([*cases, None, None]):
        for trial in range(rng.randint(1, 3)):
            run = trace_create(
                actors.acme, f"{experiment.name}-{i}-{trial}", experiment=experiment.name, case=case and case.pk
            )
            scores.append(_score(run, experiment, "answered", "h", rng.random() < 0.8))
            if trial == 0 or rng.random() < 0.5:  # not on every trial: a case's scorers name different runs
                scores.append(_score(run, experiment, "contains", f"case-{i}", rng.random() < 0.6))
            for config in ("s1", "s2"):  # json_valid twice a run: one row per config
                scores.append(_score(run, experiment, "json_valid", config, rng.random() < 0.5))
            value = rng.choice([0.0, 0.5, 1.0])
            scores.append(_score(run, experiment, "label:helpful", f"reviewer-{trial}", value >= 0.5, value=value))
            if rng.random() < 0.2:  # the run changed after it was scored: its scores are stale
                Trace.objects.filter(pk=run.pk).update(revision=2)
    Score.objects.bulk_create(scores)


@pytest.fixture
def scored(actors):
    rng = random.Random(7)
    score_configs_store(project_id=actors.acme.pk, configs={**CONFIGS, **{f"case-{i}": "{}" for i in range(14)}})
    dataset = Dataset.objects.create(project=actors.acme, name="desk")
    cases = [GoldenCase.objects.create(dataset=dataset, name=f"case_{i}") for i in range(12)]
    base = Experiment.objects.create(project=actors.acme, name="v1")
    candidate = Experiment.objects.create(project=actors.acme, name="v2")
    for experiment in (base, candidate):
        _experiment_scored(actors, rng, experiment, cases)
    return base, candidate


def _current(*experiments):
    return set(summaries_stats([e.pk for e in experiments]))


@pytest.mark.parametrize("scorers", [None, ["contains"], ["json_valid", "label:helpful"], ["absent"]])
def test_compare_gives_the_same_answer_from_scores_and_from_summaries(scored, scorers):
    base, candidate = scored
    assert _current(base, candidate) == set()
    from_scores = experiments_compare(base=base, candidate=candidate, scorers=scorers)
    summaries_build([base.pk, candidate.pk])
    assert _current(base, candidate) == {base.pk, candidate.pk}
    assert experiments_compare(base=base, candidate=candidate, scorers=scorers) == from_scores
    if scorers is None:  # the workload has something to show on every side
        assert from_scores["flipped"]["pass_to_fail_count"] and from_scores["flipped"]["fail_to_pass_count"]
        assert {r["scorer"] for r in from_scores["scorers"] if "config" in r} == {"json_valid"}


def test_each_flip_names_the_newest_run_of_its_own_scorer_on_both_sides(actors):
    """A case whose scorers' newest runs differ: each flipped scorer shows its own run, both ways."""
    score_configs_store(project_id=actors.acme.pk, configs={"h": "{}"})
    case = GoldenCase.objects.create(dataset=Dataset.objects.create(project=actors.acme, name="desk"), name="c")
    sides = {}
    for name, passed in (("before", True), ("after", False)):
        experiment = Experiment.objects.create(project=actors.acme, name=name)
        older, newer = (trace_create(actors.acme, f"{name}-{n}", experiment=name, case=case.pk) for n in (1, 2))
        # contains was scored on the older run only, answered on the newer one
        Score.objects.bulk_create(
            [_score(older, experiment, "contains", "h", passed), _score(newer, experiment, "answered", "h", passed)]
        )
        sides[name] = experiment
    for base, candidate, direction in (("before", "after", "pass_to_fail"), ("after", "before", "fail_to_pass")):
        from_scores = experiments_compare(base=sides[base], candidate=sides[candidate])["flipped"]
        summaries_build([sides[base].pk, sides[candidate].pk])
        from_summaries = experiments_compare(base=sides[base], candidate=sides[candidate])["flipped"]
        assert from_summaries == from_scores
        shown = {(f["scorer"], f["base_trace_id"], f["candidate_trace_id"]) for f in from_summaries[direction]}
        runs = {("answered", f"{base}-2", f"{candidate}-2"), ("contains", f"{base}-1", f"{candidate}-1")}
        assert shown == runs


def _bump_revision(run):
    Trace.objects.filter(pk=run.pk).update(revision=run.revision + 1)


CHANGES = {
    "a score written": lambda run, e: Score.objects.create(
        project=run.project,
        trace=run,
        experiment=e,
        case_id=run.case_id,
        scorer="new",
        config_hash="h",
        value=0.0,
        passed=False,
    ),  # fmt: skip
    "a score relabelled": lambda run, e: Score.objects.filter(trace=run).update(value=0.0, passed=False),
    "a score deleted": lambda run, e: Score.objects.filter(trace=run, scorer="answered").delete(),
    "a run revised": lambda run, e: _bump_revision(run),
    "a run deleted": lambda run, e: Trace.objects.filter(pk=run.pk).delete(),
}


@pytest.mark.parametrize("change", CHANGES)
def test_a_change_drops_the_summary_of_its_experiment_only(scored, change):
    base, candidate = scored
    summaries_build([base.pk, candidate.pk])
    run = Trace.objects.filter(experiment=candidate, case__isnull=False, revision=1).order_by("pk").first()
    CHANGES[change](run, candidate)
    assert _current(base, candidate) == {base.pk}
    answer = experiments_compare(base=base, candidate=candidate)  # from the scores
    summaries_build([candidate.pk])
    assert experiments_compare(base=base, candidate=candidate) == answer


def test_truncating_the_scores_drops_every_summary(scored):
    base, candidate = scored
    summaries_build([base.pk, candidate.pk])
    with connection.cursor() as cursor:
        cursor.execute("TRUNCATE scoring_score")
    assert _current(base, candidate) == set()


def test_a_deleted_experiment_leaves_no_summary_rows(scored):
    base, candidate = scored
    summaries_build([base.pk, candidate.pk])
    candidate.delete()
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM scoring_score_summary_case WHERE experiment_id = %s", [candidate.pk])
        assert cursor.fetchone()[0] == 0
    assert _current(base) == {base.pk}


def test_a_pass_extends_the_summary_as_it_writes_and_an_insert_by_anything_else_drops_it(actors):
    experiment = Experiment.objects.create(project=actors.acme, name="v3")
    for i in range(4):
        trace_create(actors.acme, f"v3-{i}", experiment="v3")
    summaries_build([experiment.pk])
    scoring_pass = pass_start(project=actors.acme, data={"scorers": ["answered"], "experiment": "v3"}, chunk_runs=2)
    pass_plan(pass_id=scoring_pass.pk)
    chunks = list(scoring_pass.chunks.order_by("ordinal").values_list("pk", flat=True))
    assert _current(experiment) == {experiment.pk}
    chunk_score(chunk_id=chunks[0], token="a")
    (stats,) = summaries_stats([experiment.pk]).values()
    assert [(r["scorer"], r["n"]) for r in stats["pairs"]] == [("answered", 2)]  # current as the pass goes
    chunk_score(chunk_id=chunks[1], token="b")
    (stats,) = summaries_stats([experiment.pk]).values()
    assert [(r["scorer"], r["n"]) for r in stats["pairs"]] == [("answered", 4)]
    run = Trace.objects.filter(experiment=experiment).first()
    Score.objects.create(
        project=actors.acme, trace=run, experiment=experiment, scorer="other", config_hash="h", value=1.0, passed=True
    )
    assert _current(experiment) == set()


def test_the_task_builds_what_is_missing(scored):
    base, candidate = scored
    summaries_build_task.apply(args=[[base.pk, candidate.pk]]).get()
    assert _current(base, candidate) == {base.pk, candidate.pk}


# --- concurrency: a write and a build never leave an old summary standing ------------


def test_a_build_does_not_wait_for_a_writer_and_builds_nothing(transactional_db, actors):
    experiment = Experiment.objects.create(project=actors.acme, name="v1")
    run = trace_create(actors.acme, "r", experiment="v1")
    written, release = threading.Event(), threading.Event()

    def writer():
        with transaction.atomic():
            Score.objects.create(
                project=run.project, trace=run, experiment=experiment, scorer="answered", config_hash="h",
                value=1.0, passed=True,
            )  # fmt: skip
            written.set()
            release.wait(30)

    thread, errors = in_thread(writer)
    assert written.wait(30)
    started = time.monotonic()
    assert summary_build(experiment.pk) is False
    assert time.monotonic() - started < 5
    release.set()
    thread.join(30)
    assert errors == [] and _current(experiment) == set()
    assert summary_build(experiment.pk) is True
    assert [r["n"] for r in summaries_stats([experiment.pk])[experiment.pk]["pairs"]] == [1]


def test_a_write_that_commits_during_a_build_drops_what_the_build_wrote(transactional_db, actors):
    experiment = Experiment.objects.create(project=actors.acme, name="v1")
    run = trace_create(actors.acme, "r", experiment="v1")

    def writer():
        Score.objects.create(
            project=run.project, trace=run, experiment=experiment, scorer="answered", config_hash="h",
            value=1.0, passed=True,
        )  # fmt: skip

    with transaction.atomic():  # a build: the exclusive lock, then what it read
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [LOCK_CLASS, experiment.pk])
            cursor.execute(
                "INSERT INTO scoring_score_summary (experiment_id, stats) VALUES (%s, %s::jsonb)",
                [experiment.pk, '{"pairs": [], "several": [], "configs": []}'],
            )
        thread, errors = in_thread(writer)
        until_a_session_waits("the writer never waited for the build", wait_event="advisory")
    thread.join(30)
    assert errors == []
    assert _current(experiment) == set()


def test_reading_the_flips_leaves_the_planner_settings_as_they_were(scored):
    base, candidate = scored
    summaries_build([base.pk, candidate.pk])
    with connection.cursor() as cursor:
        settings = "SELECT current_setting('enable_nestloop'), current_setting('jit'), current_setting('work_mem')"
        cursor.execute(settings)
        before = cursor.fetchone()
        rows = summary_flipped_rows(base.pk, candidate.pk, None, 5)
        cursor.execute(settings)
        assert cursor.fetchone() == before
    assert before[0] == "on" and before[2] != "64MB"
    assert rows and all(len(row) == 6 for row in rows)
