"""A real Celery worker process, on the real broker, writing to the test database."""

from django.conf import settings

from evalsite.models import Heartbeat
from evalsite.tasks import heartbeat
from tests.live import celery_worker, wait_for


def test_a_real_worker_runs_a_task_and_its_result_reaches_the_database(transactional_db):
    with celery_worker() as (queue, _process):
        heartbeat.apply_async(queue=queue)
        beat = wait_for(
            lambda: Heartbeat.objects.filter(hostname__startswith=queue).first(), timeout=90, what="heartbeat"
        )
    assert beat.seen_at is not None


def test_a_worker_sends_its_heartbeat_by_itself_and_healthz_lists_it(transactional_db, client):
    with celery_worker(env={"EVALSITE_HEARTBEAT_SECONDS": 2}) as (queue, _process):
        beat = wait_for(
            lambda: Heartbeat.objects.filter(hostname__startswith=queue).first(), timeout=60, what="a heartbeat"
        )
        first_seen = beat.seen_at
        again = wait_for(
            lambda: Heartbeat.objects.filter(hostname=beat.hostname, seen_at__gt=first_seen).first(),
            timeout=60,
            what="a second heartbeat",
        )
        assert again.hostname in client.get("/healthz").json()["workers"]


def test_the_broker_is_redis_when_redis_url_is_set_and_the_filesystem_otherwise():
    if settings.REDIS_URL:
        assert settings.CELERY_BROKER_URL.startswith("redis://")
        assert settings.CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"] >= 3600
    else:
        assert settings.CELERY_BROKER_URL.startswith("filesystem://")
