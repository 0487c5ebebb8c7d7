"""A real Celery beat and worker evaluate monitors on their schedule, on the real broker."""

import subprocess
import sys
import uuid

import pytest

from monitors.models import Alert
from tests.live import ROOT, celery_worker, child_env, process_stop, wait_for
from tests.monitors.conftest import runs_create

pytestmark = pytest.mark.worker


def test_beat_sends_the_evaluation_and_a_worker_fires_the_monitor(transactional_db, actors, monitor_create, tmp_path):
    runs_create(actors.acme, prefix="bad", count=200, failing=60)
    monitor = monitor_create(actors.acme)
    queue = f"test-{uuid.uuid4().hex[:12]}"
    # Beat sends to the default queue and the fan-out goes there too: both are this test's own.
    with celery_worker(queue=queue, env={"EVALSITE_QUEUE": queue}):
        env = child_env(EVALSITE_QUEUE=queue, EVALSITE_MONITOR_EVALUATE_SECONDS=1)
        log = open(tmp_path / "beat.log", "w")  # noqa: SIM115 - closed below
        beat = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "evalsite", "beat", "--loglevel", "INFO",
             "--schedule", str(tmp_path / "schedule")],
            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        try:
            alert = wait_for(lambda: Alert.objects.filter(monitor=monitor).first(), timeout=90, what="the alert")
            monitor.refresh_from_db()
            first_evaluation = monitor.last_evaluated_at
            wait_for(
                lambda: type(monitor).objects.get(pk=monitor.pk).last_evaluated_at > first_evaluation,
                timeout=60, what="a second evaluation",
            )  # fmt: skip
        finally:
            process_stop(beat)
            log.close()
    assert alert.kind == "fired"
    assert Alert.objects.filter(monitor=monitor).count() == 1
