"""A production helpdesk bot that drifts slowly worse over twelve simulated hours.

``deskbot`` answers IT tickets; a good answer opens a ticket ("ticket INC-..."), a bad
one brushes the user off. For five hours nearly every answer is good; from hour 5 the
share of bad answers grows a little every minute, to 39% by hour 9; at hour 10 a fix
ships and answers are good again. The runs arrive through the API with their real
start times spread over the twelve hours; an online rule scores every one as it arrives
(``contains`` "ticket"); a one-hour monitor of that pass rate is evaluated every ten
simulated minutes (``monitor_evaluate(now=...)``). It must stay quiet through the good
hours and the first, noisy stretch of the drift, fire once the drift is real, and
resolve once the fix has filled its window: one alert each way, no flapping.
"""

import hashlib
from datetime import timedelta

from django.utils import timezone

from monitors.evaluation import monitor_evaluate
from monitors.models import Alert, Monitor
from online.models import OnlineRule
from online.rules import rule_tick
from scoring.models import PassStatus, ScoringChunk, ScoringPass
from scoring.passes.services import chunk_score, pass_plan

RUNS_PER_STEP = 20  # 120 runs an hour
STEP_MINUTES = 10
HOURS = 12


def _work(rule):
    """What a worker does with the rule's new passes: plan each, then score its chunks."""
    pass_ids = rule.samples.filter(scoring_pass__status=PassStatus.QUEUED).values("scoring_pass")
    for scoring_pass in ScoringPass.objects.filter(pk__in=pass_ids).order_by("pk"):
        pass_plan(pass_id=scoring_pass.pk)
        for chunk in ScoringChunk.objects.filter(scoring_pass=scoring_pass).order_by("ordinal"):
            chunk_score(chunk_id=chunk.pk, token=f"task-{chunk.pk}")


def _bad_share(hour):
    if hour < 5:
        return 0.03
    if hour < 9:
        return 0.03 + (hour - 5) * 0.09
    return 0.39 if hour < 10 else 0.02


def _run(trace_id, started_at, hour):
    draw = int.from_bytes(hashlib.sha256(trace_id.encode()).digest()[:8], "big") / 2**64
    good = draw >= _bad_share(hour)
    answer = (
        "I have opened ticket INC-4411 for your VPN problem; an engineer will call you within the hour."
        if good else "Please try turning it off and on again."
    )  # fmt: skip
    return {"trace_id": trace_id, "name": "deskbot", "tags": ["prod"], "input": "My VPN drops every ten minutes.",
            "output": answer, "started_at": started_at.isoformat(), "latency_ms": 1800, "spans": []}  # fmt: skip


def test_the_monitor_stays_quiet_while_good_fires_on_the_drift_and_resolves_after_the_fix(actors):
    api = actors.api()
    response = api.post("/v1/api/online-rules", {
        "name": "deskbot answers", "filter": {"name": "deskbot", "experiment": "none"},
        "scorers": ["contains"], "config": {"contains": {"value": "ticket"}}, "sample_rate": 1.0,
    }, format="json")  # fmt: skip
    assert response.status_code == 201, response.content
    rule = OnlineRule.objects.get(pk=response.json()["id"])
    response = api.post("/v1/api/monitors", {
        "name": "deskbot quality", "metric": "pass_rate", "scorer": "contains", "target": 0.9,
        "window_minutes": 60, "min_runs": 30, "filter": {"name": "deskbot", "tags": ["prod"]},
    }, format="json")  # fmt: skip
    assert response.status_code == 201, response.content
    monitor = Monitor.objects.get(pk=response.json()["id"])
    start = timezone.now() - timedelta(hours=HOURS + 1)
    states = []
    for step in range(HOURS * 60 // STEP_MINUTES):
        runs = []
        for i in range(RUNS_PER_STEP):
            minute = step * STEP_MINUTES + i * STEP_MINUTES / RUNS_PER_STEP
            runs.append(_run(f"desk-{step}-{i}", start + timedelta(minutes=minute), minute / 60))
        assert api.post("/v1/api/traces", {"traces": runs}, format="json").status_code == 201
        rule_tick(rule_id=rule.pk)  # what a worker's tick does, then its pass
        _work(rule)
        now = start + timedelta(minutes=(step + 1) * STEP_MINUTES)
        monitor_evaluate(monitor_id=monitor.pk, now=now)
        monitor.refresh_from_db()
        states.append(((step + 1) * STEP_MINUTES / 60, monitor.state, monitor.last_n, monitor.last_value))
    assert rule.samples.count() == HOURS * 60 // STEP_MINUTES * RUNS_PER_STEP

    alerts = list(Alert.objects.filter(monitor=monitor).order_by("at"))
    assert [a.kind for a in alerts] == ["fired", "resolved"], states
    fired_hour = (alerts[0].at - start) / timedelta(hours=1)
    resolved_hour = (alerts[1].at - start) / timedelta(hours=1)
    # Quiet through the five good hours and the first hour of the drift (bad share under 12%).
    assert all(state != "firing" for hour, state, _, _ in states if hour <= 6), states
    # Fires once the drift is real: before the bad share passes 25% (hour 7.5).
    assert 6 < fired_hour <= 7.5, states
    assert alerts[0].n >= 100 and alerts[0].high < 0.9 and len(alerts[0].run_ids) > 10
    # Firing for as long as the window holds the bad hours; resolved within the hour after the fix.
    assert all(state == "firing" for hour, state, _, _ in states if fired_hour <= hour < resolved_hour)
    assert 10 < resolved_hour <= 11 and alerts[1].low > 0.9
    assert states[-1][1] == "ok"
