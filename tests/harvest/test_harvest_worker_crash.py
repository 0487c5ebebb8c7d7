"""A worker killed with SIGKILL while it groups runs leaves nothing half written; the next worker does it all.

The build of the groups is one transaction. The first worker is killed while its first
tick builds (a third of a second into it, before the commit: the test checks nothing of it is
there), and a second worker's tick builds the groups, each run once.
"""

import os
import time
from pathlib import Path

import pytest
from django.utils import timezone

from harvest.models import FailureGroup, FailureMember, HarvestState
from tests.harvest.traffic import MODES, traffic_create
from tests.live import kill_worker, process_stop, wait_for, worker_start

pytestmark = pytest.mark.worker
SCALE = 30
EXPECTED = sum(m.count for m in MODES) * SCALE


def test_a_worker_killed_mid_build_leaves_no_half_written_groups(transactional_db, actors, settings):
    traffic_create(actors.acme, scale=SCALE)
    queue = f"harvest-crash-{os.getpid()}-{int(time.time())}"
    log = Path(settings.VAR_DIR) / f"test-worker-{queue}.log"
    env = {"EVALSITE_HARVEST_TICK_SECONDS": 1}
    first = second = None
    try:
        first = worker_start(queue=queue, concurrency=1, log_path=log, env=env)
        wait_for(lambda: "ready." in log.read_text() or None, timeout=60, what=f"the first worker (see {log})")
        time.sleep(1.3)  # its first tick is under way: reading, clustering or writing
        kill_worker(first)
        killed_at = timezone.now()
        # The kill landed before the build committed: nothing of it is there.
        assert FailureMember.objects.count() == 0 and not FailureGroup.objects.exists()
        second = worker_start(queue=queue, concurrency=1, log_path=log, env=env)
        wait_for(lambda: FailureMember.objects.count() == EXPECTED or None, timeout=120,
                 what=f"the groups built by the second worker (see {log})")  # fmt: skip
    finally:
        for process in (first, second):
            if process is not None and process.poll() is None:
                process_stop(process)
    assert sum(FailureGroup.objects.values_list("size", flat=True)) == EXPECTED
    assert HarvestState.objects.get(project=actors.acme).built_at > killed_at
