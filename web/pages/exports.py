"""Project exports on the settings page: ask a worker for the archive, then download it.

Admins only (``admin_page``). ``POST settings/exports/`` queues a job
(``lifecycle.exports``) and comes back to the settings page, whose exports table shows
each job's progress, the download link once it is done and why it failed.
``GET settings/exports/<id>.zip`` streams the file.
"""

from django.contrib import messages
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from lifecycle.exports import export_get, export_request
from web.api.exports import export_download
from web.pages.refusals import refusal
from web.pages.team import admin_page


def _back(project):
    return redirect(reverse("project-settings", args=[project.slug]) + "#exports-heading")


@require_POST
@admin_page
def export_start(request, project):
    job = export_request(project=project, user=request.user)
    messages.success(request, f"Export {job.pk} is {job.status}: a worker writes it; this page shows its progress.")
    return _back(project)


@admin_page
def export_page_download(request, project, export_id):
    with refusal(request=request, prefix=f"Export {export_id} cannot be downloaded: "):
        return export_download(export_get(project=project, export_id=export_id))
    return _back(project)  # refused (not ready, failed, removed): the settings page says why
