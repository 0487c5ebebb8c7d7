"""A real Celery worker keeps the failure groups: it builds them, then places runs as a pass scores them."""

import pytest

from harvest.models import FailureGroup, FailureMember
from scoring.passes.services import pass_start
from tests.factories import run_payload
from tests.harvest.traffic import MODES, traffic_create

PLANTED = sum(m.count for m in MODES)


@pytest.mark.worker
def test_a_worker_builds_the_groups_then_places_runs_a_pass_scores(transactional_db, actors):
    from datasets.ingestion import traces_ingest
    from tests.live import celery_worker, wait_for

    planted = traffic_create(actors.acme)
    with celery_worker(env={"EVALSITE_HARVEST_TICK_SECONDS": "1"}) as (queue, _):
        wait_for(lambda: FailureMember.objects.count() == PLANTED or None, timeout=90, what="the first build")
        group = FailureGroup.objects.get(members__trace__trace_id=planted["bad_json"][0])
        before = FailureGroup.objects.count()
        runs = [run_payload(f"late-{i}", input=f"Export my invoices of May {i} as a JSON document", output="not json",
                            spans=[]) for i in range(15)]  # fmt: skip
        traces_ingest(project=actors.acme, payload={"traces": runs})
        pass_start(project=actors.acme, data={"scorers": ["json_valid"], "trace_ids": [r["trace_id"] for r in runs]},
                   queue=queue)  # fmt: skip
        wait_for(lambda: FailureMember.objects.count() == PLANTED + 15 or None, timeout=90, what="the late runs")
    assert FailureMember.objects.filter(group=group, trace__trace_id__startswith="late-").count() == 15
    assert FailureGroup.objects.count() == before
    group.refresh_from_db()
    assert group.size == 45 + 15
