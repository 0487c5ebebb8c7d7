"""The evaluation of a monitor over the runs of its window: alerts only on decidable changes."""

from checks.monitoring import FIRING, INSUFFICIENT, OK
from datasets.models import Trace
from monitors.evaluation import monitor_evaluate
from monitors.models import Alert
from scoring.models import Score, ScoreSource
from tests.monitors.conftest import runs_create


def test_it_fires_once_with_the_failing_runs_on_sixty_bad_of_two_hundred(actors, monitor_create):
    runs = runs_create(actors.acme, prefix="bad", count=200, failing=60)
    monitor = monitor_create(actors.acme)
    alert = monitor_evaluate(monitor_id=monitor.pk)
    assert (alert.kind, alert.n, alert.value) == ("fired", 200, 0.7)
    assert alert.high < 0.9
    assert alert.run_ids == [run.pk for run in runs[:60]]
    assert "must stay above 0.9" in alert.text
    monitor.refresh_from_db()
    assert (monitor.state, monitor.last_n) == (FIRING, 200)


def test_it_leaves_out_the_scores_of_runs_that_changed_since(actors, monitor_create):
    runs = runs_create(actors.acme, prefix="revised", count=200, failing=60)
    # A span arrived on each failing run after it was scored: its score no longer describes it.
    Trace.objects.filter(pk__in=[run.pk for run in runs[:60]]).update(revision=2)
    monitor = monitor_create(actors.acme)
    assert monitor_evaluate(monitor_id=monitor.pk) is None
    monitor.refresh_from_db()
    assert (monitor.state, monitor.last_n, monitor.last_value) == (OK, 140, 1.0)


def test_it_writes_no_second_alert_when_evaluated_again(actors, monitor_create):
    runs_create(actors.acme, prefix="bad", count=200, failing=60)
    monitor = monitor_create(actors.acme)
    monitor_evaluate(monitor_id=monitor.pk)
    assert monitor_evaluate(monitor_id=monitor.pk) is None
    assert Alert.objects.filter(monitor=monitor).count() == 1


def test_it_stays_insufficient_on_five_bad_runs_of_eight(actors, monitor_create):
    runs_create(actors.acme, prefix="few", count=8, failing=5)
    monitor = monitor_create(actors.acme)
    assert monitor_evaluate(monitor_id=monitor.pk) is None
    monitor.refresh_from_db()
    assert monitor.state == INSUFFICIENT
    assert not Alert.objects.exists()


def test_it_resolves_once_the_window_holds_only_good_runs(actors, monitor_create):
    runs_create(actors.acme, prefix="old-bad", count=200, failing=60, ago_minutes=90)
    runs_create(actors.acme, prefix="new-good", count=200, failing=2)
    monitor = monitor_create(actors.acme, state=FIRING)
    alert = monitor_evaluate(monitor_id=monitor.pk)
    assert (alert.kind, alert.n) == ("resolved", 200)
    assert alert.low >= 0.9


def test_it_counts_only_production_runs_of_its_filter(actors, monitor_create):
    runs_create(actors.acme, prefix="other", count=200, failing=100, name="other-agent")
    runs_create(actors.acme, prefix="ci", count=200, failing=100, experiment="v2")
    runs_create(actors.acme, prefix="tagged", count=40, failing=0, tags=["eu"])
    monitor = monitor_create(actors.acme, filter={"name": "reservo", "tags": ["eu"]})
    monitor_evaluate(monitor_id=monitor.pk)
    monitor.refresh_from_db()
    assert (monitor.state, monitor.last_n, monitor.last_value) == (OK, 40, 1.0)


def test_it_fires_on_an_error_rate_above_its_target(actors, monitor_create):
    runs_create(actors.acme, prefix="err", count=100, status="error", error="boom")
    runs_create(actors.acme, prefix="fine", count=100)
    monitor = monitor_create(actors.acme, metric="error_rate", scorer="", target=0.05, direction="below")
    alert = monitor_evaluate(monitor_id=monitor.pk)
    assert (alert.kind, alert.n, alert.value) == ("fired", 200, 0.5)
    assert len(alert.run_ids) == 100


def test_it_fires_on_a_p95_latency_whose_lower_bound_is_above_the_target(actors, monitor_create):
    runs_create(actors.acme, prefix="slow", count=150, latency_ms=5000)
    monitor = monitor_create(actors.acme, metric="latency_p95", scorer="", target=2000, direction="below")
    alert = monitor_evaluate(monitor_id=monitor.pk)
    assert (alert.kind, alert.value, alert.low) == ("fired", 5000.0, 5000.0)


def _thumbs_down(project, runs):
    Score.objects.bulk_create(
        Score(
            project=project,
            trace=run,
            scorer="feedback:thumbs",
            config_hash="0" * 64,
            value=0.0,
            passed=False,
            source=ScoreSource.FEEDBACK,
        )
        for run in runs
    )


def test_it_reads_feedback_scores_of_its_feedback_name(actors, monitor_create):
    runs = runs_create(actors.acme, prefix="fb", count=60)
    _thumbs_down(actors.acme, runs)
    monitor = monitor_create(actors.acme, metric="feedback", scorer="", feedback_name="thumbs", target=0.5)
    alert = monitor_evaluate(monitor_id=monitor.pk)
    assert (alert.kind, alert.n, alert.value) == ("fired", 60, 0.0)


def test_feedback_given_before_a_late_span_still_counts(actors, monitor_create):
    runs = runs_create(actors.acme, prefix="fb-late", count=60)
    _thumbs_down(actors.acme, runs)
    Trace.objects.filter(pk__in=[run.pk for run in runs]).update(revision=2)
    monitor = monitor_create(actors.acme, metric="feedback", scorer="", feedback_name="thumbs", target=0.5)
    alert = monitor_evaluate(monitor_id=monitor.pk)
    assert (alert.kind, alert.n, alert.value) == ("fired", 60, 0.0)
    assert len(alert.run_ids) == 60


def test_a_paused_monitor_is_not_evaluated(actors, monitor_create):
    runs_create(actors.acme, prefix="bad", count=200, failing=60)
    monitor = monitor_create(actors.acme, paused=True)
    assert monitor_evaluate(monitor_id=monitor.pk) is None
    monitor.refresh_from_db()
    assert monitor.last_evaluated_at is None
