"""The embedded broker (files in var/broker/queue) and a message file read half-written.

kombu's writer creates the message file and writes it afterwards; a worker that lists
the folder in between reads an empty or partial file. These tests plant such files in
the queue folder a real worker consumes and check it survives and runs every message.
"""

import os
import time
import uuid
from pathlib import Path

import pytest
from django.conf import settings

from evalsite import filesystem_broker
from evalsite.models import Heartbeat
from evalsite.tasks import heartbeat
from tests.live import celery_worker, wait_for

pytestmark = pytest.mark.skipif(bool(settings.REDIS_URL), reason="the filesystem broker is the embedded default")

QUEUE_DIR = Path(settings.CELERY_BROKER_TRANSPORT_OPTIONS["data_folder_in"]) if not settings.REDIS_URL else None


def _message_file(queue):
    return QUEUE_DIR / f"{int(time.monotonic() * 1000)}_{uuid.uuid4()}.{queue}.msg"


def _payload_of_one_heartbeat(queue):
    """The bytes the broker writes for one heartbeat task to ``queue`` (sent to a queue nobody reads)."""
    hold = f"hold-{uuid.uuid4().hex[:8]}"
    heartbeat.apply_async(queue=hold)
    (path,) = QUEUE_DIR.glob(f"*.{hold}.msg")
    data = path.read_bytes()
    path.unlink()
    return data


def _seen_after(hostname, moment):
    return Heartbeat.objects.filter(hostname=hostname, seen_at__gt=moment).first()


def test_the_embedded_broker_is_the_atomic_filesystem_transport():
    assert settings.CELERY_BROKER_TRANSPORT == "evalsite.filesystem_broker:Transport"


def test_a_message_is_written_under_a_name_the_reader_ignores_then_renamed_whole():
    queue = f"w-{uuid.uuid4().hex[:8]}"
    heartbeat.apply_async(queue=queue)
    (path,) = QUEUE_DIR.glob(f"*.{queue}.msg")
    assert path.read_bytes().startswith(b"{")
    path.unlink()
    assert not list(QUEUE_DIR.glob(f"{filesystem_broker.TEMPORARY_PREFIX}*"))


def test_a_worker_survives_empty_and_half_written_message_files_and_runs_every_message(transactional_db):
    env = {"EVALSITE_HEARTBEAT_SECONDS": 240}  # only the tasks move seen_at after the first beat
    with celery_worker(env=env) as (queue, process):
        beat = wait_for(lambda: Heartbeat.objects.filter(hostname__startswith=queue).first(), what="first beat")
        payload = _payload_of_one_heartbeat(queue)
        empty, partial = _message_file(queue), _message_file(queue)
        empty.write_bytes(b"")
        partial.write_bytes(payload[: len(payload) // 2])
        before = beat.seen_at
        time.sleep(0.05)
        heartbeat.apply_async(queue=queue)
        after_first = wait_for(lambda: _seen_after(beat.hostname, before), what="the real message run").seen_at
        time.sleep(1)  # several polls over the planted files
        assert process.poll() is None, "the worker died on a planted file"
        assert empty.exists() and partial.exists(), "a file still being written was consumed"

        partial.write_bytes(payload)  # the writer finishes
        wait_for(lambda: _seen_after(beat.hostname, after_first), what="the completed message run")
        wait_for(lambda: not partial.exists(), what="the completed message taken")
        assert process.poll() is None
    empty.unlink()


def test_a_file_unreadable_past_the_grace_is_moved_aside_not_read(transactional_db):
    queue = f"aside-{uuid.uuid4().hex[:8]}"
    stale = _message_file(queue)
    stale.write_bytes(b'{"half')
    old = time.time() - filesystem_broker.UNREADABLE_GRACE_SECONDS - 5
    os.utime(stale, (old, old))
    from evalsite.celery import app

    with app.connection_for_read() as connection:
        channel = connection.default_channel
        with pytest.raises(filesystem_broker.Empty):
            channel._get(queue)
    assert not stale.exists()
    assert (QUEUE_DIR.parent / "unreadable" / stale.name).read_bytes() == b'{"half'
    (QUEUE_DIR.parent / "unreadable" / stale.name).unlink()
