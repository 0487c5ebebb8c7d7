"""The project's quota_per_minute bounds the scores passes write, exactly, however many write at once.

Three passes run at the same time in three worker processes (a real Celery worker with
concurrency 3), their chunks interleaved. Together they would write 1,800 scores; the
quota is 500 per minute. Exactly 500 are written in the window, and each of the other
1,300 is recorded as a skip with reason ``quota``, never written over the ceiling and
never dropped silently.
"""

import time
from datetime import UTC, datetime

import pytest
from django.db import transaction
from django.db.models import Sum

from datasets.ingestion import traces_ingest
from evalsite.models import QuotaWindow
from scoring.models import Abstention, AbstentionKind, PassStatus, Score, ScoringChunk, ScoringPass
from scoring.passes.services import pass_start
from tests.factories import run_payload
from tests.live import celery_worker, wait_for

pytestmark = pytest.mark.worker

QUOTA = 500
RUNS = 300
SCORER_SETS = [["answered", "no_errors"], ["no_tool_loop", "not_a_refusal"], ["no_leaked_secret", "json_valid"]]


def test_concurrent_passes_write_exactly_the_quota_and_skip_the_rest(transactional_db, actors):
    traces_ingest(project=actors.acme, payload={"traces": [run_payload(f"q-{i:04d}") for i in range(RUNS)]})
    actors.acme.quota_per_minute = QUOTA
    actors.acme.save()
    with celery_worker(concurrency=3) as (queue, _process):
        # All three passes start together, early enough in a minute to finish inside it.
        wait_for(lambda: datetime.now(UTC).second < 30, timeout=61, interval=0.2, what="the start of a quota window")
        with transaction.atomic():
            passes = [
                pass_start(project=actors.acme, data={"scorers": scorers}, chunk_runs=20, queue=queue)
                for scorers in SCORER_SETS
            ]
        started = time.monotonic()
        wait_for(
            lambda: ScoringPass.objects.filter(pk__in=[p.pk for p in passes], status=PassStatus.DONE).count() == 3,
            timeout=120,
            what="the three passes",
        )
    assert time.monotonic() - started < 60
    windows = list(QuotaWindow.objects.filter(project=actors.acme))
    assert len(windows) == 1, "the passes crossed a minute boundary"
    assert windows[0].used == QUOTA
    assert Score.objects.filter(project=actors.acme).count() == QUOTA
    quota_skips = Abstention.objects.filter(kind=AbstentionKind.SKIPPED, reason="quota")
    assert quota_skips.count() == RUNS * 2 * 3 - QUOTA
    totals = ScoringPass.objects.filter(pk__in=[p.pk for p in passes]).aggregate(
        written=Sum("written"), skipped=Sum("skipped")
    )
    assert totals == {"written": QUOTA, "skipped": RUNS * 2 * 3 - QUOTA}
    # The passes really ran at the same time, in separate processes.
    runs = ScoringPass.objects.filter(pk__in=[p.pk for p in passes]).values_list("started_at", "finished_at")
    assert max(started for started, _ in runs) < min(finished for _, finished in runs)
    claimers = set(ScoringChunk.objects.filter(scoring_pass__in=passes).values_list("claimed_by", flat=True))
    assert len(claimers) >= 2
