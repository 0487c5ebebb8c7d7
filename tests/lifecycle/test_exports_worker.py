"""Exports on real processes: asked through the HTTP API of a gunicorn server, written by a Celery
worker, downloaded and imported back; and a worker killed in the middle of one, whose job another
worker finishes."""

import json
import urllib.request
import uuid

import pytest
from django.core.management import call_command

from datasets.ingestion import traces_ingest
from datasets.models import Span, Trace
from evalsite.models import Project
from lifecycle.models import ProjectExport
from scoring.models import Score
from scoring.passes.services import pass_start
from tests.factories import run_payload
from tests.live import celery_worker, kill_worker, wait_for, web_server, worker_start


def _call(url, key, method="GET"):
    request = urllib.request.Request(url, method=method, headers={"Authorization": f"Bearer {key}"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return response.status, response.headers, response.read()


def _job(base, key, job_id):
    return json.loads(_call(f"{base}/v1/api/exports/{job_id}", key)[2])


def _counts(project):
    return {
        "runs": Trace.objects.filter(project=project).count(),
        "spans": Span.objects.filter(trace__project=project).count(),
        "scores": Score.objects.filter(project=project).count(),
        "trace_ids": sorted(Trace.objects.filter(project=project).values_list("trace_id", flat=True)),
        "scored": sorted(Score.objects.filter(project=project).values_list("trace__trace_id", "scorer", "passed")),
    }


def _runs_store(project, count):
    for start in range(0, count, 500):
        batch = [
            run_payload(f"run-{i:05d}", experiment="v1", output=f"{i} EUR")
            for i in range(start, min(start + 500, count))
        ]
        traces_ingest(project=project, payload={"traces": batch})


def _env(tmp_path):
    queue = f"test-export-{uuid.uuid4().hex[:10]}"
    return queue, {
        "EVALSITE_QUEUE": queue,
        "EVALSITE_EXPORT_DIR": tmp_path / "exports",
        "EVALSITE_CHUNK_LEASE_SECONDS": 4,
    }


@pytest.mark.worker
def test_an_export_asked_through_the_api_is_written_by_a_worker_downloaded_and_imported_back(
    transactional_db, actors, tmp_path
):
    _runs_store(actors.acme, 1200)
    queue, env = _env(tmp_path)
    with celery_worker(queue=queue, env=env), web_server(env=env) as base:
        pass_start(project=actors.acme, data={"scorers": ["contains"], "config": {"contains": {"value": "EUR"}},
                                              "experiment": "v1", "limit": 1200}, queue=queue)  # fmt: skip
        wait_for(lambda: Score.objects.filter(project=actors.acme).count() == 1200, timeout=120, what="the scores")
        status, headers, body = _call(f"{base}/v1/api/exports", actors.acme_key, method="POST")
        job = json.loads(body)
        assert (status, job["status"], job["runs_total"]) == (202, "queued", 1200)
        done = wait_for(
            lambda: (j := _job(base, actors.acme_key, job["id"]))["status"] in ("done", "failed") and j,
            timeout=120,
            what="the export",
        )
        assert (done["status"], done["runs_written"], done["scores_written"]) == ("done", 1200, 1200), done
        status, headers, archive = _call(base + done["download_url"], actors.acme_key)
    assert (status, headers["Content-Type"], len(archive)) == (200, "application/zip", done["size_bytes"])
    path = tmp_path / "downloaded.zip"
    path.write_bytes(archive)
    call_command("import_project", str(path), "--slug", "moved")
    assert _counts(Project.objects.get(slug="moved")) == _counts(actors.acme)


@pytest.mark.worker
def test_a_worker_killed_while_it_writes_an_export_leaves_the_job_to_another(transactional_db, actors, tmp_path):
    _runs_store(actors.acme, 6000)
    queue, env = _env(tmp_path)
    log = tmp_path / "worker.log"
    with web_server(env=env) as base:
        first = worker_start(queue=queue, log_path=log, env=env)
        _, _, body = _call(f"{base}/v1/api/exports", actors.acme_key, method="POST")
        job_id = json.loads(body)["id"]
        wait_for(lambda: _job(base, actors.acme_key, job_id)["runs_written"] >= 500, timeout=120, interval=0.05,
                 what="the first worker writing")  # fmt: skip
        kill_worker(first)
        killed = _job(base, actors.acme_key, job_id)
        assert killed["status"] == "running" and killed["runs_written"] < 6000, killed
        with celery_worker(queue=queue, env=env):
            done = wait_for(
                lambda: (j := _job(base, actors.acme_key, job_id))["status"] in ("done", "failed") and j,
                timeout=180,
                what="the second worker to finish the export",
            )
        assert (done["status"], done["runs_written"], done["attempts"]) == ("done", 6000, 2), done
        _, _, archive = _call(base + done["download_url"], actors.acme_key)
    exports = sorted(p.name for p in (tmp_path / "exports").iterdir() if not p.name.endswith(".part"))
    assert exports == [f"acme-{job_id}.zip"]
    path = tmp_path / "downloaded.zip"
    path.write_bytes(archive)
    call_command("import_project", str(path), "--slug", "moved")
    assert _counts(Project.objects.get(slug="moved")) == _counts(actors.acme)
    assert ProjectExport.objects.get(pk=job_id).error == ""
