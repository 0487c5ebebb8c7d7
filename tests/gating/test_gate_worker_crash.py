"""A gate whose worker is killed with SIGKILL mid-gate is finished by the next worker, with the same verdict.

The gate is too large for the request, so a real worker evaluates it, calling a real
(slow, local) judge for every run. Once a few judge scores are written, the worker is
killed with ``kill -9``: no clean-up runs and the gate run stays ``running``. Its lease
runs out, the sweeper of a second worker hands the gate run over, and the second worker
reuses the judge scores already stored, judges only the rest and records the verdict.
"""

import os
import time
from pathlib import Path

import pytest
from django.db.models import Count

from datasets.ingestion import traces_ingest
from datasets.models import Dataset, GoldenCase
from gating.evaluation import gate_request
from gating.models import GateCase, GateRun
from scoring.judge.services import judge_configure
from scoring.models import Score
from tests.factories import run_payload
from tests.live import kill_worker, process_stop, wait_for, worker_start
from tests.scoring.judge_server import judge_server, says

pytestmark = pytest.mark.worker

CASES = 12
FAILING = {3, 7, 11}  # their answers lack the required word
WORKER_ENV = {"EVALSITE_CHUNK_LEASE_SECONDS": 3, "EVALSITE_VISIBILITY_TIMEOUT_SECONDS": 5}


def _gate_data(project):
    dataset = Dataset.objects.create(project=project, name="desk")
    runs = []
    for i in range(CASES):
        GoldenCase.objects.create(
            dataset=dataset, name=f"case-{i:02d}", expectations={"contains": "EUR", "scorers": ["helpful"]}
        )
        runs.append(
            run_payload(
                f"v1-{i:02d}", dataset="desk", case=f"case-{i:02d}", experiment="v1",
                output="no price" if i in FAILING else "75 EUR",
            )
        )  # fmt: skip
    traces_ingest(project=project, payload={"traces": runs})


def test_a_gate_killed_mid_gate_is_finished_by_the_next_worker(transactional_db, actors, settings):
    settings.EVALSITE_GATE_SYNC_MAX_CASES = 1
    queue = f"gate-crash-{os.getpid()}-{int(time.time())}"
    log = Path(settings.VAR_DIR) / f"test-worker-{queue}.log"
    first = second = None
    with judge_server() as judge:
        judge.default = says('{"score": 1, "reason": "helpful enough"}', delay=0.4)
        judge_configure(
            project=actors.acme, endpoint=judge.url, model="m", timeout_seconds=5, max_concurrency=1,
            criteria={"helpful": "Is the answer helpful?"},
        )  # fmt: skip
        _gate_data(actors.acme)
        try:
            first = worker_start(queue=queue, concurrency=1, log_path=log, env=WORKER_ENV)
            gate_run = gate_request(project=actors.acme, dataset_name="desk", experiment_name="v1", queue=queue)
            assert gate_run.status == GateRun.Status.RUNNING
            wait_for(
                lambda: Score.objects.filter(scorer="helpful").count() >= 3,
                timeout=120, interval=0.05, what=f"judge scores of the first worker (see {log})",
            )  # fmt: skip
            kill_worker(first)
            judged_before = Score.objects.filter(scorer="helpful").count()
            assert judged_before < CASES
            assert GateRun.objects.get(pk=gate_run.pk).status == GateRun.Status.RUNNING
            calls_at_kill = judge.count

            second = worker_start(queue=queue, concurrency=1, log_path=log, env=WORKER_ENV)
            wait_for(
                lambda: GateRun.objects.filter(pk=gate_run.pk, status=GateRun.Status.DONE).exists(),
                timeout=180, interval=0.5, what=f"the gate to finish after the crash (see {log})",
            )  # fmt: skip
        finally:
            for process in (first, second):
                if process is not None:
                    process_stop(process)

    gate_run = GateRun.objects.get(pk=gate_run.pk)
    assert (gate_run.verdict, gate_run.passed_cases, gate_run.total_cases) == ("FAIL", CASES - len(FAILING), CASES)
    assert gate_run.attempts >= 2
    failed = set(GateCase.objects.filter(gate_run=gate_run, passed=False).values_list("name", flat=True))
    assert failed == {f"case-{i:02d}" for i in FAILING}
    assert GateCase.objects.filter(gate_run=gate_run).count() == CASES
    # Every run judged exactly once in the database, and the second worker judged only what was missing.
    assert Score.objects.filter(scorer="helpful").count() == CASES
    assert not Score.objects.values("trace", "scorer").annotate(n=Count("id")).filter(n__gt=1).exists()
    assert judge.count - calls_at_kill <= CASES - judged_before + 1
