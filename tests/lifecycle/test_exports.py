"""Export jobs in one process: who may ask, the job's answers, failures that say why, the sweep and retention.

The worker's part (``export_run``) is called here directly; tests/lifecycle/test_exports_worker.py runs
it on a real worker behind a real web server.
"""

import io
import os
import time
import zipfile
from datetime import timedelta

import orjson
import pytest
from django.utils import timezone

from datasets.models import Trace
from evalsite.scopes import ADMIN, GATE, INGEST
from lifecycle.archive import project_import
from lifecycle.exports import export_dir, export_request, export_run, exports_sweep
from lifecycle.models import ProjectExport
from tests.factories import run_payload


@pytest.fixture
def exports(settings, tmp_path):
    settings.EVALSITE_EXPORT_DIR = tmp_path / "exports"
    return settings.EVALSITE_EXPORT_DIR


@pytest.fixture
def sent(monkeypatch):
    """The export messages sent to workers (the broker hop; the worker test sends real ones)."""
    messages = []
    monkeypatch.setattr("lifecycle.tasks.export_run_task.delay", messages.append)
    return messages


@pytest.fixture
def runs(actors):
    api = actors.api()
    batch = [run_payload(f"r-{i}", experiment="v1", output=f"answer {i}") for i in range(7)]
    assert api.post("/v1/api/traces", {"traces": batch}, format="json").status_code == 201
    return batch


def _download(api, url):
    response = api.get(url)
    return response, b"".join(response.streaming_content) if response.status_code == 200 else response.content


def test_an_admin_key_asks_for_an_export_follows_it_and_downloads_the_zip(actors, runs, exports):
    api = actors.api()
    asked = api.post("/v1/api/exports")
    assert asked.status_code == 202, asked.content
    job = asked.json()
    assert (job["status"], job["runs_total"], job["runs_written"], job["download_url"]) == ("queued", 7, 0, None)
    assert asked["Location"] == job["url"] == f"/v1/api/exports/{job['id']}"
    assert api.post("/v1/api/exports").json()["id"] == job["id"]  # one job at a time per project
    early = api.get(f"/v1/api/exports/{job['id']}/download")
    assert early.status_code == 409 and "not ready" in early.json()["detail"]

    assert export_run(job["id"]) == "done"
    assert export_run(job["id"]) is None  # a second message for the same job does nothing
    done = api.get(job["url"]).json()
    assert (done["status"], done["runs_written"], done["attempts"]) == ("done", 7, 1)
    assert done["download_url"] == f"/v1/api/exports/{job['id']}/download"
    response, body = _download(api, done["download_url"])
    assert (response.status_code, response["Content-Type"], len(body)) == (200, "application/zip", done["size_bytes"])
    assert [p.name for p in exports.iterdir()] == [f"acme-{job['id']}.zip"]  # no temporary file left
    moved = project_import(data=body, slug="moved")
    assert sorted(Trace.objects.filter(project=moved).values_list("trace_id", flat=True)) == sorted(
        r["trace_id"] for r in runs
    )


@pytest.mark.parametrize("scopes", [[INGEST, GATE], [ADMIN]])
def test_only_admin_keys_of_the_project_see_its_exports(actors, runs, exports, scopes):
    job = export_request(project=actors.acme)
    export_run(job.pk)
    api = actors.ci_api(scopes=scopes)
    answers = [
        api.post("/v1/api/exports").status_code,
        api.get("/v1/api/exports").status_code,
        api.get(f"/v1/api/exports/{job.pk}").status_code,
        api.get(f"/v1/api/exports/{job.pk}/download").status_code,
    ]
    assert answers == ([202, 200, 200, 200] if scopes == [ADMIN] else [403, 403, 403, 403])
    if scopes != [ADMIN]:
        assert api.get(f"/v1/api/exports/{job.pk}").json()["required_scope"] == "admin"
    outsider = actors.outsider_api()
    assert outsider.get(f"/v1/api/exports/{job.pk}").status_code == 404
    assert outsider.get(f"/v1/api/exports/{job.pk}/download").status_code == 404


def test_an_export_that_cannot_be_written_fails_and_says_why(actors, runs, settings, tmp_path):
    settings.EVALSITE_EXPORT_DIR = tmp_path / "not-a-directory"
    settings.EVALSITE_EXPORT_DIR.write_text("a file where the directory should be")
    job = export_request(project=actors.acme)
    assert export_run(job.pk) == "failed"
    answer = actors.api().get(f"/v1/api/exports/{job.pk}").json()
    assert answer["status"] == "failed" and "FileExistsError" in answer["error"], answer
    download = actors.api().get(f"/v1/api/exports/{job.pk}/download")
    assert download.status_code == 409 and "failed: FileExistsError" in download.json()["detail"]


def _as_if_its_worker_died(job):
    """Claimed by a worker that was then killed: running, its lease run out."""
    ProjectExport.objects.filter(pk=job.pk).update(
        status="running", attempts=job.attempts + 1, lease_until=timezone.now() - timedelta(seconds=1)
    )
    job.refresh_from_db()


def test_the_sweep_sends_again_a_job_whose_worker_died_then_fails_it_past_its_attempts(
    actors, runs, exports, sent, settings
):
    settings.EVALSITE_EXPORT_MAX_ATTEMPTS = 2
    job = export_request(project=actors.acme)
    _as_if_its_worker_died(job)
    assert exports_sweep()["sent"] == [job.pk]
    assert sent == [job.pk]
    assert exports_sweep()["sent"] == []  # its new lease runs: not sent twice
    job.refresh_from_db()
    assert (job.status, job.attempts) == ("queued", 1)
    _as_if_its_worker_died(job)  # the second worker dies too
    assert exports_sweep()["failed"] == [job.pk]
    job.refresh_from_db()
    assert job.status == "failed" and "stopped before the end, 2 times" in job.error


def test_the_sweep_sends_again_a_queued_job_whose_message_was_lost(actors, runs, exports, sent):
    job = export_request(project=actors.acme)
    assert exports_sweep()["sent"] == []  # its message may still be on its way
    ProjectExport.objects.filter(pk=job.pk).update(lease_until=timezone.now() - timedelta(seconds=1))
    assert exports_sweep()["sent"] == [job.pk] and sent == [job.pk]
    assert export_run(job.pk) == "done"


def test_old_files_are_removed_after_the_retention_and_the_job_says_so(actors, runs, exports, settings):
    settings.EVALSITE_EXPORT_RETENTION_HOURS = 24
    old, recent = export_request(project=actors.acme), None
    export_run(old.pk)
    recent = export_request(project=actors.acme)
    export_run(recent.pk)
    ProjectExport.objects.filter(pk=old.pk).update(finished_at=timezone.now() - timedelta(hours=25))
    stale_part = export_dir() / ".acme-99.zip.0123abcd.part"
    stale_part.write_bytes(b"half an archive of a killed worker")
    two_days_ago = time.time() - 48 * 3600
    os.utime(stale_part, (two_days_ago, two_days_ago))

    swept = exports_sweep()
    assert (swept["expired"], swept["parts_removed"]) == ([old.pk], 1)
    assert sorted(p.name for p in exports.iterdir()) == [f"acme-{recent.pk}.zip"]
    api = actors.api()
    assert api.get(f"/v1/api/exports/{old.pk}").json()["status"] == "expired"
    gone = api.get(f"/v1/api/exports/{old.pk}/download")
    assert gone.status_code == 404 and "removed after 24 h" in gone.json()["detail"]
    response, body = _download(api, f"/v1/api/exports/{recent.pk}/download")
    manifest = orjson.loads(zipfile.ZipFile(io.BytesIO(body)).read("manifest.json"))
    assert response.status_code == 200 and manifest["counts"]["runs"] == 7
