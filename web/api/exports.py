"""``/v1/api/exports``: a whole-project archive written by a worker, then downloaded.

Admin keys only, reads included (the archive holds every run of the project). ``POST``
answers 202 with the job (a job already queued or running is answered instead of a new
one); ``GET exports/{id}`` tells its status and progress; ``GET exports/{id}/download``
streams the zip once it is done (409 before, with why it failed; 404 once the file was
removed after ``EVALSITE_EXPORT_RETENTION_HOURS``).
"""

from django.http import FileResponse
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field, inline_serializer
from rest_framework import serializers, status
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BaseRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from evalsite.auth import request_project
from evalsite.errors import ScopeMissing
from evalsite.scopes import ADMIN, key_has_scope
from lifecycle.exports import export_file, export_get, export_request, exports_recent
from web.api.openapi import problem_responses


@extend_schema_field(OpenApiTypes.STR)
class _ExportUrl(serializers.Field):
    def to_representation(self, pk):
        return reverse("api-export", args=[pk])


@extend_schema_field({"type": "string", "nullable": True})
class _DownloadUrl(serializers.Field):
    def to_representation(self, job):
        return reverse("api-export-download", args=[job.pk]) if job.status == "done" else None


class ExportOut(serializers.Serializer):
    id = serializers.IntegerField()
    url = _ExportUrl(source="pk")
    status = serializers.CharField(help_text="queued, running, done, failed or expired (the file was removed).")
    runs_total = serializers.IntegerField(help_text="Runs in the project when the export was asked for.")
    runs_written = serializers.IntegerField(help_text="Runs written so far.")
    scores_written = serializers.IntegerField(help_text="Scores written so far.")
    size_bytes = serializers.IntegerField(allow_null=True, help_text="The zip's size once done.")
    error = serializers.CharField(help_text="Why the export failed.")
    attempts = serializers.IntegerField(help_text="Workers that took the job (more than 1: one stopped).")
    download_url = _DownloadUrl(source="*", allow_null=True, help_text="Once done: where to download the zip.")
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)


ExportList = inline_serializer("ExportList", {"results": ExportOut(many=True, help_text="Up to 10, newest first.")})


def _admin_only(request):
    if not key_has_scope(request.auth, ADMIN):
        raise ScopeMissing(ADMIN, detail="Project exports hold every run: they need a key with the 'admin' scope.")
    return request_project(request)


class ExportCollection(APIView):
    required_scopes = {"POST": ADMIN}

    @extend_schema(
        operation_id="exports_create",
        summary="Ask a worker for an archive of the whole project",
        description="Answers 202 with the job; follow its `url` for the progress, then `download_url`. A job already "
        "queued or running is answered instead of a new one. The archive is what `manage.py export_project` writes.",
        request=None,
        responses={202: ExportOut, **problem_responses(401, 403)},
    )
    def post(self, request):
        project = _admin_only(request)  # the admin scope is required_scopes' too; the check is kept in one place
        job = export_request(project=project, key=request.auth)
        body = ExportOut(job).data
        return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": body["url"]})

    @extend_schema(
        operation_id="exports_list",
        summary="The project's latest exports, newest first",
        responses={200: ExportList, **problem_responses(401, 403)},
    )
    def get(self, request):
        return Response({"results": ExportOut(exports_recent(project=_admin_only(request)), many=True).data})


class ExportDetail(APIView):
    @extend_schema(
        operation_id="exports_retrieve",
        summary="An export: status, progress, download link",
        responses={200: ExportOut, **problem_responses(401, 403, 404)},
    )
    def get(self, request, export_id):
        return Response(ExportOut(export_get(project=_admin_only(request), export_id=export_id)).data)


class ZipRenderer(BaseRenderer):
    media_type = "application/zip"
    format = "zip"
    charset = None

    def render(self, data, accepted_media_type=None, renderer_context=None):
        return data


class ZipOnly(DefaultContentNegotiation):
    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type


def export_download(job):
    """The done job's zip, streamed from its file (shared by the API and the settings page)."""
    response = FileResponse(open(export_file(job), "rb"), content_type="application/zip")  # noqa: SIM115 - closed by Django
    response["Content-Disposition"] = f'attachment; filename="{job.project.slug}-export-{job.pk}.zip"'
    return response


class ExportDownload(APIView):
    renderer_classes = [ZipRenderer]
    content_negotiation_class = ZipOnly

    @extend_schema(
        operation_id="exports_download",
        summary="Download a done export's zip",
        responses={
            (200, "application/zip"): OpenApiResponse(OpenApiTypes.BINARY, description="The project archive."),
            **problem_responses(401, 403, 404, 409),
        },
    )
    def get(self, request, export_id):
        return export_download(export_get(project=_admin_only(request), export_id=export_id))
