"""Builders for monitor tests: production runs in a window, with a scorer's results."""

import secrets
from datetime import timedelta

import pytest
from django.utils import timezone

from datasets.ingestion import traces_ingest
from datasets.models import Trace
from monitors.models import Monitor
from scoring.models import Score
from tests.factories import run_payload


def runs_create(project, *, prefix, count, failing=0, ago_minutes=5, **fields):
    """``count`` production runs started ``ago_minutes`` ago, each scored by ``quality``;
    the first ``failing`` fail it. Returns their Trace rows."""
    started = (timezone.now() - timedelta(minutes=ago_minutes)).isoformat()
    payloads = [run_payload(f"{prefix}-{i}", started_at=started, spans=[], **fields) for i in range(count)]
    traces_ingest(project=project, payload={"traces": payloads})
    runs = list(Trace.objects.filter(project=project, trace_id__startswith=f"{prefix}-").order_by("pk"))
    Score.objects.bulk_create(
        [
            Score(
                project=project,
                trace=run,
                scorer="quality",
                config_hash="0" * 64,
                value=float(i >= failing),
                passed=i >= failing,
            )
            for i, run in enumerate(runs)
        ]  # fmt: skip
    )
    return runs


@pytest.fixture
def monitor_create():
    def create(project, **fields):
        values = {"name": "quality", "metric": "pass_rate", "scorer": "quality", "target": 0.9,
                  "direction": "above", "window_minutes": 60, "secret": secrets.token_hex(16), **fields}  # fmt: skip
        return Monitor.objects.create(project=project, **values)

    return create
