"""Project exports written by workers: a job per request, a file under ``EVALSITE_EXPORT_DIR``.

A project of 81,000 runs takes minutes to archive, too long for a web request, so the
page and the API ask for a job (``export_request``) and a worker writes the archive
(``export_run``, sent by ``lifecycle.tasks``). The pieces:

- The file is written as ``.<name>.<random>.part`` and renamed to ``<slug>-<id>.zip``
  once complete and synced, so a file under its final name is always a whole archive;
  ``ProjectExport.path`` holds that name, relative to ``EVALSITE_EXPORT_DIR``.
- Progress: ``runs_written`` of ``runs_total`` (and ``scores_written``) are saved every
  500 runs and 2,000 scores.
- Crash safety uses the house's leases (``evalsite.background``): the worker claims
  the job by compare-and-set with a lease and renews it from a thread while it
  writes. ``exports_sweep`` (every worker sends it on a timer) gives a job whose lease
  ran out (its worker was killed) to another worker, up to
  ``EVALSITE_EXPORT_MAX_ATTEMPTS`` attempts, then fails it saying why; a queued job
  whose message was lost (the filesystem broker never redelivers) is sent again.
- Retention: the sweep removes a done job's file ``EVALSITE_EXPORT_RETENTION_HOURS``
  after it finished (the job says ``expired``), and ``.part`` files left by killed
  workers once as old.
- A failure other than a transient database error is final: the job is ``failed`` with
  the error, and the partial file removed.

``export_write`` writes the same archive synchronously (``manage.py export_project``).
"""

import contextlib
import logging
import os
import uuid
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from datasets.models import Trace
from evalsite.background import TRANSIENT_ERRORS, lease, renewed_while
from evalsite.errors import Conflict, NotFound
from lifecycle.archive import project_export_write
from lifecycle.models import ExportStatus, ProjectExport

logger = logging.getLogger(__name__)

ACTIVE = (ExportStatus.QUEUED, ExportStatus.RUNNING)
SHOWN = 10


def export_dir():
    path = Path(settings.EVALSITE_EXPORT_DIR)
    path.mkdir(parents=True, exist_ok=True)
    return path


def export_write(project, path, progress=None):
    """Write ``project``'s archive to ``path`` atomically (a temporary file, then a rename); the counts."""
    path = Path(path)
    part = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.part")
    try:
        with open(part, "wb") as out:
            counts = project_export_write(project, out, progress)
            out.flush()
            os.fsync(out.fileno())
        os.replace(part, path)
    finally:
        part.unlink(missing_ok=True)
    return counts


# --- requests and reads -------------------------------------------------------------------


def export_request(*, project, user=None, key=None):
    """Queue an export of ``project``, sent to a worker after the commit; a job already queued
    or running for the project is answered instead of a second one."""
    with transaction.atomic():
        active = ProjectExport.objects.filter(project=project, status__in=ACTIVE).order_by("-pk").first()
        if active is not None:
            return active
        job = ProjectExport.objects.create(
            project=project, requested_by=user, requested_by_key=key, lease_until=timezone.now() + lease(),
            runs_total=Trace.objects.filter(project=project).count(),
        )  # fmt: skip
        transaction.on_commit(lambda: _send(job.pk))
    return job


def _send(job_id):
    from lifecycle.tasks import export_run_task

    try:
        export_run_task.delay(job_id)
    except Exception:  # the broker is away: the sweep sends it again once the lease runs out
        logger.exception("export %s: could not be sent to a worker; the sweep will send it again", job_id)


def export_get(*, project, export_id):
    job = ProjectExport.objects.filter(project=project, pk=export_id).select_related("requested_by", "project").first()
    if job is None:
        raise NotFound(f"No export {export_id} in this project.")
    return job


def exports_recent(*, project, limit=SHOWN):
    return list(ProjectExport.objects.filter(project=project).select_related("requested_by").order_by("-pk")[:limit])


def export_file(job):
    """The path of a done job's archive; ``Conflict`` while it is not ready, ``NotFound`` once removed."""
    if job.status in ACTIVE:
        raise Conflict(f"Export {job.pk} is {job.status}: the file is not ready yet.")
    if job.status == ExportStatus.FAILED:
        raise Conflict(f"Export {job.pk} failed: {job.error}")
    path = export_dir() / Path(job.path).name
    if job.status != ExportStatus.DONE or not job.path or not path.is_file():
        raise NotFound(f"The file of export {job.pk} was removed after {settings.EVALSITE_EXPORT_RETENTION_HOURS} h.")
    return path


# --- the worker's side --------------------------------------------------------------------


def export_run(job_id):
    """Claim the job and write its archive; its final status, or None when it was not ours to take."""
    now = timezone.now()
    claimed = ProjectExport.objects.filter(pk=job_id, status=ExportStatus.QUEUED).update(
        status=ExportStatus.RUNNING, attempts=F("attempts") + 1, lease_until=now + lease(), started_at=now, error=""
    )
    if not claimed:
        return None
    job = ProjectExport.objects.select_related("project").get(pk=job_id)
    name = f"{job.project.slug}-{job.pk}.zip"
    try:
        with renewed_while(lambda: _renew(job_id), name=f"export-{job_id}-lease"):
            counts = export_write(job.project, export_dir() / name, progress=_progress(job_id))
    except TRANSIENT_ERRORS:
        # The database went away: back to the queue (the task is retried; failing that,
        # the sweep sends it again once the lease runs out).
        with contextlib.suppress(*TRANSIENT_ERRORS):
            ProjectExport.objects.filter(pk=job_id, status=ExportStatus.RUNNING).update(status=ExportStatus.QUEUED)
        raise
    except Exception as exc:
        logger.exception("export %s failed", job_id)
        _fail(job_id, f"{type(exc).__name__}: {exc}", status=ExportStatus.RUNNING)
        return ExportStatus.FAILED
    done = ProjectExport.objects.filter(pk=job_id, status=ExportStatus.RUNNING).update(
        status=ExportStatus.DONE, path=name, size_bytes=(export_dir() / name).stat().st_size,
        runs_written=counts["runs"], scores_written=counts["scores"], finished_at=timezone.now(), lease_until=None,
    )  # fmt: skip
    if not done:  # the sweep took it back meanwhile (a lease not renewed in time): that attempt wins
        return None
    return ExportStatus.DONE


def _renew(job_id):
    return ProjectExport.objects.filter(pk=job_id, status=ExportStatus.RUNNING).update(
        lease_until=timezone.now() + lease()
    )


def _progress(job_id):
    fields = {"runs": "runs_written", "scores": "scores_written"}

    def progress(kind, written):
        ProjectExport.objects.filter(pk=job_id).update(**{fields[kind]: written})

    return progress


def _fail(job_id, error, *, status):
    return ProjectExport.objects.filter(pk=job_id, status=status).update(
        status=ExportStatus.FAILED, error=error[:2000], finished_at=timezone.now(), lease_until=None
    )


# --- the sweep ----------------------------------------------------------------------------


def exports_sweep(*, now=None):
    """Send again the jobs whose lease ran out, fail those past their attempts, remove old files.

    Returns ``{"sent": [...ids], "failed": [...ids], "expired": [...ids], "parts_removed": n}``.
    Safe from several workers at once: every change is a compare-and-set.
    """
    now = now or timezone.now()
    sent, failed = [], []
    overdue = ProjectExport.objects.filter(status__in=ACTIVE, lease_until__lt=now).values_list(
        "pk", "status", "attempts"
    )
    for pk, status, attempts in overdue:
        if status == ExportStatus.RUNNING and attempts >= settings.EVALSITE_EXPORT_MAX_ATTEMPTS:
            error = f"The worker writing it stopped before the end, {attempts} times; ask for a new export."
            if _fail(pk, error, status=ExportStatus.RUNNING):
                failed.append(pk)
            continue
        again = ProjectExport.objects.filter(pk=pk, status=status, lease_until__lt=now).update(
            status=ExportStatus.QUEUED, lease_until=now + lease()
        )
        if again:
            _send(pk)
            sent.append(pk)
    return {"sent": sent, "failed": failed, **_old_files_remove(now)}


def _old_files_remove(now):
    cutoff = now - timedelta(hours=settings.EVALSITE_EXPORT_RETENTION_HOURS)
    expired = []
    old = ProjectExport.objects.filter(status=ExportStatus.DONE, finished_at__lt=cutoff)
    for pk, name in old.values_list("pk", "path"):
        (export_dir() / Path(name).name).unlink(missing_ok=True)
        if ProjectExport.objects.filter(pk=pk, status=ExportStatus.DONE).update(status=ExportStatus.EXPIRED, path=""):
            expired.append(pk)
    parts = 0
    for part in export_dir().glob(".*.part"):
        with contextlib.suppress(FileNotFoundError):
            if part.stat().st_mtime < cutoff.timestamp():
                part.unlink()
                parts += 1
    return {"expired": expired, "parts_removed": parts}
