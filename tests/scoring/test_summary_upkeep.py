"""Summaries kept current as passes write: what compare reads from a kept summary is what
it reads from the scores, pass after pass, and a merge that cannot be exact drops it."""

import random
from types import SimpleNamespace

import pytest
from django.db import connection

from datasets.models import Dataset, Experiment, GoldenCase, Trace
from gating.comparison import experiments_compare
from scoring.models import PassStatus, Score
from scoring.passes.services import chunk_score, pass_plan, pass_start
from scoring.passes.summaries import summaries_build, summaries_stats
from scoring.pipeline.summary_upkeep import batch_read, stats_merged
from tests.factories import trace_create

pytestmark = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="summaries are kept on PostgreSQL (DATABASE_URL)"
)

OBJECT, ARRAY = {"type": "object"}, {"type": "array"}


def _current(*experiments):
    return set(summaries_stats([e.pk for e in experiments]))


def _pass(project, experiment, scorers, *, chunk_runs=3):
    """A pass over ``experiment`` run here, chunk by chunk (each chunk writes in its own transactions)."""
    scoring_pass = pass_start(
        project=project, data={"scorers": scorers, "experiment": experiment.name}, chunk_runs=chunk_runs
    )
    pass_plan(pass_id=scoring_pass.pk)
    for ordinal, chunk_id in enumerate(scoring_pass.chunks.order_by("ordinal").values_list("pk", flat=True)):
        chunk_score(chunk_id=chunk_id, token=f"t{ordinal}")
    scoring_pass.refresh_from_db()
    assert scoring_pass.status == PassStatus.DONE, scoring_pass.error
    return scoring_pass


def _from_scores(base, candidate):
    """Compare read from the scores: both summaries dropped first (and left dropped)."""
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM scoring_score_summary WHERE experiment_id IN (%s, %s)", [base.pk, candidate.pk])
    return experiments_compare(base=base, candidate=candidate)


def _experiment(actors, rng, name, cases):
    """Runs of ``name``: one to three trials a case, answers that pass or fail each check, two without a case."""
    experiment = Experiment.objects.create(project=actors.acme, name=name)
    for i, case in enumerate([*cases, None, None]):
        for trial in range(rng.randint(1, 3)):
            output = rng.choice(['{"room": "Focus"}', "[1, 2]", "Focus costs 75 EUR", ""])
            trace_create(
                actors.acme, f"{name}-{i}-{trial}", experiment=name, case=case and case.pk, output=output,
                latency_ms=rng.choice([200, 5000]),
            )  # fmt: skip
    return experiment


@pytest.fixture
def sides(actors):
    rng = random.Random(11)
    dataset = Dataset.objects.create(project=actors.acme, name="desk")
    cases = [
        GoldenCase.objects.create(
            dataset=dataset, name=f"case_{i}", expectations={"contains": rng.choice(["Focus", "EUR", "1"])}
        )
        for i in range(10)
    ]
    return tuple(_experiment(actors, rng, name, cases) for name in ("v1", "v2"))


PASSES = [
    ["answered", "contains"],  # per-case configs
    [{"scorer": "json_valid", "config": {"schema": OBJECT}}, {"scorer": "json_valid", "config": {"schema": ARRAY}}],
    ["json_valid", {"scorer": "latency_budget", "config": {"ms": 1000}}],  # a third config of json_valid
]


def test_passes_keep_both_summaries_current_and_compare_reads_from_them_what_it_reads_from_the_scores(actors, sides):
    base, candidate = sides
    assert _current(base, candidate) == set()
    for scorers in PASSES:
        for experiment in sides:
            _pass(actors.acme, experiment, scorers)
        assert _current(base, candidate) == {base.pk, candidate.pk}  # started empty, extended by every batch
        kept = experiments_compare(base=base, candidate=candidate)
        assert kept == _from_scores(base, candidate)
        summaries_build([base.pk, candidate.pk])  # as compare's worker would; the next pass extends these
        assert experiments_compare(base=base, candidate=candidate) == kept
    stats = summaries_stats([candidate.pk])[candidate.pk]
    assert stats["several"] == [["json_valid", "1"]]
    assert {r["config_hash"] for r in stats["configs"]} == set(
        Score.objects.filter(experiment=candidate, scorer="json_valid").values_list("config_hash", flat=True)
    )
    assert kept["flipped"]["pass_to_fail_count"] + kept["flipped"]["fail_to_pass_count"] > 0


def test_a_pass_over_an_experiment_with_scores_and_no_summary_leaves_it_to_the_build(actors, sides):
    base, _ = sides
    _pass(actors.acme, base, ["answered"])
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM scoring_score_summary")  # as any other change to the scores does
    scoring_pass = pass_start(project=actors.acme, data={"scorers": ["contains"], "experiment": "v1"}, chunk_runs=3)
    pass_plan(pass_id=scoring_pass.pk)
    first, *rest = scoring_pass.chunks.order_by("ordinal").values_list("pk", flat=True)
    chunk_score(chunk_id=first, token="a")
    assert _current(base) == set()  # not started: scores were there before it
    for ordinal, chunk_id in enumerate(rest):
        chunk_score(chunk_id=chunk_id, token=f"b{ordinal}")
    assert _current(base) == {base.pk}  # built when the pass ended
    assert {r["scorer"]: r["n"] for r in summaries_stats([base.pk])[base.pk]["pairs"]} == {
        "answered": Trace.objects.filter(experiment=base).count(),
        "contains": Trace.objects.filter(experiment=base, case__isnull=False).count(),
    }


def test_a_case_edited_between_passes_drops_the_summary_its_runs_would_split(actors, sides, monkeypatch):
    """``contains`` has per-case configs; an edited case gives its runs a second config:
    figures per config that were never kept cannot be merged, so the summary is dropped
    (and built again when the pass ends)."""
    from scoring.passes import services

    base, _ = sides
    _pass(actors.acme, base, ["contains"])
    assert _current(base) == {base.pk}
    case_id = Trace.objects.filter(experiment=base, case__isnull=False).order_by("pk").first().case_id
    GoldenCase.objects.filter(pk=case_id).update(expectations={"contains": "costs"})
    built = []
    monkeypatch.setattr(services, "summaries_build", built.append)
    _pass(actors.acme, base, ["contains"], chunk_runs=100)
    assert _current(base) == set()
    assert built == [[base.pk]]


def test_a_write_above_the_bound_drops_the_summary_and_the_pass_that_ends_builds_it(actors, sides, monkeypatch):
    from scoring.pipeline import summary_upkeep

    base, _ = sides
    _pass(actors.acme, base, ["answered"])
    assert _current(base) == {base.pk}
    monkeypatch.setattr(summary_upkeep, "KEPT_UP_TO", 0)
    scoring_pass = pass_start(project=actors.acme, data={"scorers": ["json_valid"], "experiment": "v1"}, chunk_runs=3)
    pass_plan(pass_id=scoring_pass.pk)
    first, *rest = scoring_pass.chunks.order_by("ordinal").values_list("pk", flat=True)
    chunk_score(chunk_id=first, token="a")

    assert _current(base) == set()  # above the bound: dropped
    for ordinal, chunk_id in enumerate(rest):
        chunk_score(chunk_id=chunk_id, token=f"b{ordinal}")
    assert _current(base) == {base.pk}


def _outcome(run_pk, scorer, digest, value):
    run = SimpleNamespace(pk=run_pk, experiment_id=1, case_id=None)
    result = SimpleNamespace(value=value, passed=value >= 0.5)
    return SimpleNamespace(run=run, scorer_id=scorer, version="1", config_hash=digest, result=result)


def test_batch_figures_merge_into_built_ones_as_sums_and_split_a_pair_with_one_config_before():
    before = {
        "pairs": [{"scorer": "json_valid", "scorer_version": "1", "n": 2, "sum": 1.0, "sum_sq": 1.0, "mean": 0.5,
                   "mean_sq": 0.5, "low_config": "a", "high_config": "a"}],
        "several": [],
        "configs": [],
    }  # fmt: skip
    batch = batch_read(
        [_outcome(1, "json_valid", "b", 0.5), _outcome(1, "label:tone", "x", 1.0)], {(1, "json_valid", "1", "a")}
    )
    merged = stats_merged(before, batch)
    pair = next(r for r in merged["pairs"] if r["scorer"] == "json_valid")
    assert (pair["n"], pair["sum"], pair["sum_sq"], pair["low_config"], pair["high_config"]) == (3, 1.5, 1.25, "a", "b")
    assert pair["mean"] == 0.5 and pair["mean_sq"] == 1.25 / 3
    assert merged["several"] == [["json_valid", "1"]]
    assert sorted((r["config_hash"], r["n"], r["sum"]) for r in merged["configs"]) == [("a", 2, 1.0), ("b", 1, 0.5)]
    several_labels = batch_read([_outcome(2, "label:tone", "x", 1.0)], {(2, "label:tone", "1", "y")})
    assert several_labels["several"] == set()  # reviewers' labels pool into one row, never split
    per_case = {**before, "pairs": [{**before["pairs"][0], "high_config": "c"}]}
    assert stats_merged(per_case, batch) is None


def _written(project, runs, scorer, passed):
    """One score of ``scorer`` on each of ``runs``, through the scoring writer."""
    from django.db import transaction

    from checks.scorers import Result
    from scoring.pipeline.engine import Outcome
    from scoring.pipeline.writer import outcomes_write

    outcomes = [Outcome(run, scorer, "1", "h", "{}", Result(float(passed), passed, "", {})) for run in runs]
    with transaction.atomic():
        outcomes_write(project=project, pass_id=None, runs=runs, outcomes=outcomes)


def test_two_writers_extending_one_summary_at_once_both_count(transactional_db, actors):
    """The second writer waits for the first's summary row, then merges onto what it committed."""
    import threading

    from django.db import transaction

    from scoring.pipeline.loading import runs_load
    from tests.scoring.races import in_thread, until_a_session_waits

    experiment = Experiment.objects.create(project=actors.acme, name="v1")
    dataset = Dataset.objects.create(project=actors.acme, name="desk")
    cases = [GoldenCase.objects.create(dataset=dataset, name=name) for name in ("c1", "c2")]
    # Each writer its own case: they meet on the summary's row of figures only.
    pks = [trace_create(actors.acme, f"r{i}", experiment="v1", case=cases[i // 3].pk).pk for i in range(6)]
    first, second = runs_load(pks[:3], spans=False, content=False), runs_load(pks[3:], spans=False, content=False)
    _written(actors.acme, first[:1], "answered", True)  # starts the summary
    assert _current(experiment) == {experiment.pk}
    merged, release = threading.Event(), threading.Event()

    def slow_writer():
        from scoring.pipeline import summary_upkeep

        extend = summary_upkeep._summary_extend

        def held(*args):
            extend(*args)
            merged.set()
            release.wait(30)  # the summary row stays locked until this transaction commits

        summary_upkeep._summary_extend = held
        try:
            _written(actors.acme, first[1:], "answered", False)
        finally:
            summary_upkeep._summary_extend = extend

    thread, errors = in_thread(slow_writer)
    assert merged.wait(30)
    other, other_errors = in_thread(lambda: _written(actors.acme, second, "answered", True))
    until_a_session_waits("the second writer waits for the summary row")
    release.set()
    thread.join(30)
    other.join(30)
    assert errors == [] and other_errors == []
    stats = summaries_stats([experiment.pk])[experiment.pk]
    assert [(r["scorer"], r["n"], r["sum"]) for r in stats["pairs"]] == [("answered", 6, 4.0)]
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "SELECT passing, passing_runs, failing, failing_runs FROM scoring_score_summary_case "
            "WHERE experiment_id = %s ORDER BY case_id",
            [experiment.pk],
        )
        assert cursor.fetchall() == [([], [], ["answered"], [pks[2]]), (["answered"], [pks[5]], [], [])]
