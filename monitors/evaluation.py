"""The evaluation of a monitor: read its window, decide (``checks.monitoring``), record.

``monitor_evaluate`` runs every minute for every monitor not paused (Celery beat,
``monitors.evaluate_all``). It reads the runs started in the last ``window_minutes``
that match the filter, takes the reading in SQL (counts, or the few order statistics a
percentile's interval needs), stores it on the monitor, and when the decided state
differs from the one read, claims the change with a conditional update
(``filter(pk=…, state=old).update(state=new)``). Only the evaluation whose claim won
writes the alert, in the same transaction with its webhook deliveries (sent once it
commits, ``monitors.webhooks``): a retried or doubled task writes none.
Firing and resolving write an alert; ``ok`` ↔ ``insufficient`` does not.
"""

from datetime import timedelta

from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from checks.monitoring import FIRING, OK, Reading, monitor_decide, percentile_ranks, rate_reading
from datasets.models import RunStatus, Trace
from monitors.models import ALERT_RUNS_CAP, Alert, Metric, Monitor
from monitors.webhooks import alert_deliveries_enqueue
from scoring.freshness import scores_standing
from scoring.models import Score

PERCENTILE = 0.95
_COLUMNS = {Metric.LATENCY_P95: "latency_ms", Metric.COST_P95: "cost_cents"}


def monitor_runs(monitor, *, start, end):
    """The runs of the monitor's window and filter, as a Trace queryset."""
    runs = Trace.objects.filter(project_id=monitor.project_id, started_at__gt=start, started_at__lte=end)
    if monitor.production_only:
        runs = runs.filter(experiment__isnull=True)
    if monitor.filter.get("name"):
        runs = runs.filter(name=monitor.filter["name"])
    tags = set(monitor.filter.get("tags") or [])
    if tags:
        # JSON containment is not portable to SQLite: the window's tags are read once, narrowly.
        keep = [pk for pk, run_tags in runs.values_list("pk", "tags") if tags <= set(run_tags or [])]
        runs = Trace.objects.filter(pk__in=keep)
    return runs


def _scorer(monitor):
    return f"feedback:{monitor.feedback_name}" if monitor.metric == Metric.FEEDBACK else monitor.scorer


def _scores(monitor, scores):
    """The monitor's scores among ``scores``. A check's score computed before a late span
    changed its run is stale (a pass scores the run again) and left out; an end user's
    feedback stands as given: it judged what the user saw, and no pass replaces it."""
    return scores_standing(scores.filter(scorer=_scorer(monitor)))


def _percentile_reading(runs, column):
    values = runs.filter(**{f"{column}__isnull": False}).order_by(column).values_list(column, flat=True)
    n = values.count()
    point, low, high = percentile_ranks(n, PERCENTILE)

    def at(rank):
        return None if rank is None else float(values[rank - 1])

    return Reading(n, at(point), at(low), at(high))


def monitor_reading(monitor, runs):
    """The reading of ``runs`` for the monitor's metric (``checks.monitoring.Reading``)."""
    if monitor.metric in _COLUMNS:
        return _percentile_reading(runs, _COLUMNS[monitor.metric])
    if monitor.metric == Metric.ERROR_RATE:
        counts = runs.aggregate(n=Count("pk"), bad=Count("pk", filter=Q(status=RunStatus.ERROR)))
        return rate_reading(counts["bad"], counts["n"])
    scores = _scores(monitor, Score.objects.filter(trace__in=runs))
    counts = scores.aggregate(n=Count("pk"), good=Count("pk", filter=Q(passed=True)))
    return rate_reading(counts["good"], counts["n"])


def monitor_failing_runs(monitor, runs):
    """The trace pks of the runs that count against the monitor (at most ``ALERT_RUNS_CAP``)."""
    if monitor.metric in _COLUMNS:
        failing = runs.filter(**{f"{_COLUMNS[monitor.metric]}__gt": monitor.target})
    elif monitor.metric == Metric.ERROR_RATE:
        failing = runs.filter(status=RunStatus.ERROR)
    else:
        bad = _scores(monitor, Score.objects.filter(trace__in=runs, passed=False))
        failing = Trace.objects.filter(pk__in=bad.values("trace_id"))
    return list(failing.order_by("pk").values_list("pk", flat=True)[:ALERT_RUNS_CAP])


def _number(value):
    return "unbounded" if value is None else f"{value:.4g}"


def alert_text(monitor, kind, reading):
    what = monitor.metric + (f" of {_scorer(monitor)}" if monitor.metric in (Metric.PASS_RATE, Metric.FEEDBACK) else "")
    return (
        f"Monitor {monitor.name!r} {kind}: {what} is {_number(reading.value)} "
        f"(95% interval {_number(reading.low)} to {_number(reading.high)}) over {reading.n} runs "
        f"in the last {monitor.window_minutes} min; it must stay {monitor.direction} {monitor.target:g}."
    )


def monitor_evaluate(*, monitor_id, now=None):
    """Evaluate the monitor once; returns the alert its state change wrote, or ``None``.

    Idempotent: the state change is claimed by a conditional update, so of two
    evaluations racing (or a task retried after it committed) one writes the alert.
    A paused or missing monitor is left as it is.
    """
    monitor = Monitor.objects.filter(pk=monitor_id, paused=False).first()
    if monitor is None:
        return None
    end = now or timezone.now()
    start = end - timedelta(minutes=monitor.window_minutes)
    runs = monitor_runs(monitor, start=start, end=end)
    reading = monitor_reading(monitor, runs)
    new = monitor_decide(
        state=monitor.state, reading=reading, target=monitor.target,
        direction=monitor.direction, min_runs=monitor.min_runs,
    )  # fmt: skip
    last = {"last_evaluated_at": end, "last_n": reading.n, "last_value": reading.value,
            "last_low": reading.low, "last_high": reading.high}  # fmt: skip
    with transaction.atomic():
        Monitor.objects.filter(pk=monitor.pk).update(**last)
        if new == monitor.state or not Monitor.objects.filter(pk=monitor.pk, state=monitor.state).update(state=new):
            return None
        kind = _alert_kind(monitor.state, new)
        if kind is None:
            return None
        alert = Alert.objects.create(
            monitor=monitor, kind=kind, at=end, window_start=start, window_end=end, n=reading.n,
            value=reading.value, low=reading.low, high=reading.high, text=alert_text(monitor, kind, reading),
            run_ids=monitor_failing_runs(monitor, runs) if kind == Alert.Kind.FIRED else [],
        )  # fmt: skip
        alert_deliveries_enqueue(alert=alert)
    return alert


def _alert_kind(old, new):
    if new == FIRING:
        return Alert.Kind.FIRED
    if old == FIRING and new == OK:
        return Alert.Kind.RESOLVED
    return None


def monitors_due():
    """The ids of every monitor to evaluate now (all not paused)."""
    return list(Monitor.objects.filter(paused=False).values_list("pk", flat=True))
