"""An admin asks for an export on the settings page; a real worker writes it; the page offers the download.

The page shows the job queued with its progress, then (reloaded) done with a download link that
gives the zip; at 390 px it fits and axe-core finds no serious or critical violation.
"""

import io
import uuid
import zipfile
from pathlib import Path

import orjson
import pytest

from evalsite.celery import app
from lifecycle.models import ProjectExport
from tests.base import actors_create
from tests.browser.conftest import axe_violations, log_in, overflow_px
from tests.factories import run_payload
from tests.live import celery_worker, wait_for

pytestmark = pytest.mark.browser

SETTINGS = "/p/acme/settings/"


@pytest.fixture
def actors(transactional_db):
    return actors_create()


def test_an_admin_exports_the_project_from_the_settings_page_and_downloads_it(
    page, actors, settings, tmp_path, monkeypatch, artifacts_dir
):
    from datasets.ingestion import traces_ingest

    traces_ingest(project=actors.acme, payload={"traces": [run_payload(f"r-{i}") for i in range(30)]})
    queue = f"browser-export-{uuid.uuid4().hex[:8]}"
    settings.EVALSITE_EXPORT_DIR = tmp_path / "exports"
    monkeypatch.setitem(app.conf, "task_default_queue", queue)  # where this process's server sends the job
    log_in(page, "alice", SETTINGS)
    page.click("#project-export")
    page.wait_for_url(f"**{SETTINGS}*")
    row = page.locator("#export-table tbody tr").first
    assert row.get_attribute("data-status") == "queued"
    assert "0 of 30" in row.inner_text()
    assert axe_violations(page) == []

    env = {"EVALSITE_QUEUE": queue, "EVALSITE_EXPORT_DIR": settings.EVALSITE_EXPORT_DIR}
    with celery_worker(queue=queue, env=env):
        wait_for(lambda: ProjectExport.objects.filter(status="done").exists(), timeout=90, what="the export")
    page.goto(SETTINGS)
    row = page.locator("#export-table tbody tr").first
    assert row.get_attribute("data-status") == "done" and "30 of 30" in row.inner_text()
    with page.expect_download() as download:
        row.locator("a.export-download").click()
    body = Path(download.value.path()).read_bytes()
    assert orjson.loads(zipfile.ZipFile(io.BytesIO(body)).read("manifest.json"))["counts"]["runs"] == 30
    assert axe_violations(page) == []
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(SETTINGS + "#exports-heading")
    assert overflow_px(page) <= 0
    page.screenshot(path=str(artifacts_dir / "settings-exports-390.png"), full_page=True)
