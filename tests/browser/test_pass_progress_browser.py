"""The pass page's progress bar moves live in a real browser while a real worker scores.

A reviewer opens the page of a queued pass, then a worker starts: the bar fills in
place (the page is not reloaded while the pass runs), and once the pass is done the
page shows it finished, with the bar full and the skips listed.
"""

import uuid

import pytest

from datasets.ingestion import traces_ingest
from scoring.passes.services import pass_start
from tests.base import actors_create
from tests.browser.conftest import log_in
from tests.factories import run_payload
from tests.live import celery_worker

pytestmark = [pytest.mark.browser, pytest.mark.worker]

RUNS = 2000


@pytest.fixture
def acme(transactional_db):
    actors = actors_create()
    for start in range(0, RUNS, 1000):
        traces_ingest(
            project=actors.acme,
            payload={"traces": [run_payload(f"live-{i:05d}") for i in range(start, start + 1000)]},
        )
    return actors


def test_the_progress_bar_fills_live_while_a_worker_scores_the_pass(page, acme, artifacts_dir):
    scorers = ["answered", "no_errors", "exact_match", "no_tool_loop", "not_a_refusal", "no_leaked_secret"]
    queue = f"browser-pass-{uuid.uuid4().hex[:8]}"
    scoring_pass = pass_start(project=acme.acme, data={"scorers": scorers, "limit": RUNS}, chunk_runs=40, queue=queue)
    log_in(page, "bob", f"/p/acme/passes/{scoring_pass.pk}/")
    assert page.inner_text('[data-field="status"]') == "queued"
    page.evaluate("window.notReloaded = true")

    with celery_worker(queue=queue) as _worker:
        # Part way: the bar moved without the page being loaded again.
        page.wait_for_function(
            "() => { const bar = document.getElementById('pass-bar');"
            " return window.notReloaded && bar.value > 0 && bar.value < bar.max; }",
            timeout=120_000,
        )
        assert page.inner_text('[data-field="status"]') == "running"
        page.screenshot(path=str(artifacts_dir / "pass-running.png"), full_page=True)
        # Done: the page loads the finished pass once, with its skips.
        page.wait_for_function("() => !window.notReloaded", timeout=180_000)
        page.wait_for_load_state()

    assert page.inner_text('[data-field="status"]') == "done"
    bar = page.locator("#pass-bar")
    assert bar.get_attribute("value") == str(RUNS)
    assert bar.get_attribute("max") == str(RUNS)
    assert page.inner_text('[data-field="written"]') == str(RUNS * 5)
    assert "no_expected_output" in page.inner_text("main")
    page.screenshot(path=str(artifacts_dir / "pass-done.png"), full_page=True)
