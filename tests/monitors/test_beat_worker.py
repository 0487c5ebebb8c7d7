"""A real Celery beat and worker evaluate monitors on their schedule and deliver the alert's
webhook, retried past two failures, exactly once."""

import subprocess
import sys
import uuid

import orjson
import pytest

from monitors.models import Alert, Delivery
from tests.live import ROOT, celery_worker, child_env, process_stop, wait_for
from tests.monitors.conftest import runs_create
from tests.monitors.receiver import webhook_receiver

pytestmark = pytest.mark.worker
SECRET = "b" * 32


def _beat(queue, tmp_path):
    log = open(tmp_path / "beat.log", "w")  # noqa: SIM115 - closed by the caller
    env = child_env(EVALSITE_QUEUE=queue, EVALSITE_MONITOR_EVALUATE_SECONDS=1)
    process = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "evalsite", "beat", "--loglevel", "INFO",
         "--schedule", str(tmp_path / "schedule")],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    return process, log


def _delivered(alert):
    return Delivery.objects.filter(alert=alert, delivered_at__isnull=False).first()


def test_beat_and_a_worker_fire_the_monitor_and_deliver_its_webhook_once(
    transactional_db, actors, monitor_create, tmp_path
):
    runs_create(actors.acme, prefix="bad", count=200, failing=60)
    queue = f"test-{uuid.uuid4().hex[:12]}"
    # Beat sends to the default queue and the worker's fan-out goes there too: both are this test's own.
    env = {"EVALSITE_QUEUE": queue, "EVALSITE_WEBHOOK_BACKOFF_SECONDS": 1, "EVALSITE_OUTBOUND_ALLOW_PRIVATE": 1}
    with webhook_receiver(secret=SECRET, failures=2) as (url, received), celery_worker(queue=queue, env=env):
        monitor = monitor_create(actors.acme, webhook_urls=[url], secret=SECRET)
        beat, log = _beat(queue, tmp_path)
        try:
            alert = wait_for(lambda: Alert.objects.filter(monitor=monitor).first(), timeout=90, what="the alert")
            delivery = wait_for(lambda: _delivered(alert), timeout=60, what="the delivery")
            evaluated = type(monitor).objects.get(pk=monitor.pk).last_evaluated_at
            wait_for(
                lambda: type(monitor).objects.get(pk=monitor.pk).last_evaluated_at > evaluated,
                timeout=60, what="a later evaluation",
            )  # fmt: skip
        finally:
            process_stop(beat)
            log.close()
    assert Alert.objects.filter(monitor=monitor).count() == 1
    assert [(status, valid) for status, _, valid in received] == [(500, True), (500, True), (200, True)]
    assert orjson.loads(received[-1][1])["alert"]["id"] == alert.pk
    assert (delivery.attempts, delivery.last_status) == (3, 200)
