"""HTTP API of datasets: create, list and read them, their JSONL export and import, and the
published expectations schema.

Views are thin: ``datasets.cases`` and ``datasets.jsonl`` validate every field (the
same rules serve the browser pages) and do every write; ``datasets.case_selectors``
scopes every read to the key's project.
"""

from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field, inline_serializer
from rest_framework import serializers, status
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.permissions import AllowAny
from rest_framework.renderers import BaseRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from checks.expectations import EXPECTATIONS_SCHEMA
from datasets.case_selectors import (
    ALL_STATUSES,
    dataset_get,
    dataset_list,
)
from datasets.case_validation import DATASET_REQUEST_SCHEMA
from datasets.cases import dataset_create
from datasets.jsonl import cases_export_lines, cases_import
from datasets.models import CaseStatus, Dataset
from evalsite.auth import request_project
from evalsite.scopes import CURATE
from web.api.openapi import PAGE_PARAMETERS, paginated, problem_responses, request_component
from web.api.rest import NewestFirstCursorPagination, validated

JSONL_MEDIA_TYPE = "application/jsonl"
# ------------------------------------------------------------------ output shapes


class DatasetOut(serializers.ModelSerializer):
    cases = serializers.SerializerMethodField(help_text="How many cases the dataset holds, by status.")

    class Meta:
        model = Dataset
        fields = ["name", "description", "archived", "created_at", "cases"]

    @extend_schema_field(
        inline_serializer(
            "DatasetCaseCounts",
            {
                "active": serializers.IntegerField(),
                "draft": serializers.IntegerField(),
                "archived": serializers.IntegerField(),
                "needs_expected_output": serializers.IntegerField(
                    help_text="Cases (archived ones aside) still waiting for an expected answer."
                ),
            },
        )
    )
    def get_cases(self, dataset):
        return {
            "active": dataset.active_cases,
            "draft": dataset.draft_cases,
            "archived": dataset.archived_cases,
            "needs_expected_output": dataset.cases_needing_expected_output,
        }


ImportOut = inline_serializer(
    "ImportResult",
    {
        "created": serializers.IntegerField(),
        "updated": serializers.IntegerField(),
        "unchanged": serializers.IntegerField(),
        "cases": inline_serializer(
            "ImportedCase",
            {
                "line": serializers.IntegerField(),
                "id": serializers.IntegerField(),
                "name": serializers.CharField(),
                "version": serializers.IntegerField(),
                "status": serializers.CharField(help_text="created, updated or unchanged."),
            },
            many=True,
        ),
    },
)


# ------------------------------------------------------- request shapes (documented)


class ExportParams(serializers.Serializer):
    format = serializers.ChoiceField(["jsonl"], required=False, default="jsonl")
    status = serializers.ChoiceField(
        [*CaseStatus.values, ALL_STATUSES], required=False, default=ALL_STATUSES,
        help_text="Export only cases with this status (default: all, archived included).",
    )  # fmt: skip


# ------------------------------------------------------------------------- views


class DatasetPagination(NewestFirstCursorPagination):
    ordering = ("name",)


class DatasetCollection(APIView):
    required_scopes = {"POST": CURATE}

    @extend_schema(
        operation_id="datasets_create",
        summary="Create a dataset",
        request=request_component("DatasetInRequest", DATASET_REQUEST_SCHEMA),
        responses={201: DatasetOut, **problem_responses(400, 401, 409)},
    )
    def post(self, request):
        project = request_project(request)
        dataset = dataset_create(project=project, data=request.data)
        return Response(
            DatasetOut(dataset_get(project=project, name=dataset.name, counted=True)).data,
            status=status.HTTP_201_CREATED,
        )

    @extend_schema(
        operation_id="datasets_list",
        summary="List datasets by name, with case counts",
        parameters=PAGE_PARAMETERS,
        responses={200: paginated("PaginatedDatasetList", DatasetOut), **problem_responses(400, 401)},
    )
    def get(self, request):
        paginator = DatasetPagination()
        page = paginator.paginate_queryset(dataset_list(project=request_project(request)), request, view=self)
        return paginator.get_paginated_response(DatasetOut(page, many=True).data)


class DatasetDetail(APIView):
    @extend_schema(
        operation_id="datasets_retrieve",
        summary="One dataset with its case counts",
        responses={200: DatasetOut, **problem_responses(401, 404)},
    )
    def get(self, request, name):
        return Response(DatasetOut(dataset_get(project=request_project(request), name=name, counted=True)).data)


class JSONLinesRenderer(BaseRenderer):
    media_type = JSONL_MEDIA_TYPE
    format = "jsonl"
    charset = None

    def render(self, data, accepted_media_type=None, renderer_context=None):
        return data


class JSONLinesOnly(DefaultContentNegotiation):
    """The export answers JSONL whatever ``Accept`` says; ``?format=`` is checked as a parameter."""

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type


def export_filename(dataset):
    return f"{dataset.project.slug}-{dataset.name}.jsonl"


def jsonl_download(dataset, *, status_filter=None):
    """A streamed JSONL download of the dataset's cases (shared by the API and the pages)."""
    response = StreamingHttpResponse(
        cases_export_lines(dataset=dataset, status=None if status_filter in (None, ALL_STATUSES) else status_filter),
        content_type=JSONL_MEDIA_TYPE,
    )
    response["Content-Disposition"] = f'attachment; filename="{export_filename(dataset)}"'
    return response


class DatasetExport(APIView):
    renderer_classes = [JSONLinesRenderer]
    content_negotiation_class = JSONLinesOnly

    @extend_schema(
        operation_id="datasets_export",
        summary="Export the dataset's cases as JSON Lines",
        description="One case per line with the keys `name, input, expected_output, expectations, status, notes, "
        "metadata, source_trace_id`, in id order. Every status by default (`status` narrows it), so importing "
        "the file into an empty dataset reproduces the cases.",
        parameters=[ExportParams],
        responses={
            (200, JSONL_MEDIA_TYPE): OpenApiResponse(OpenApiTypes.STR, description="One JSON case per line."),
            **problem_responses(400, 401, 404),
        },
    )
    def get(self, request, name):
        params = validated(ExportParams, request.query_params)
        dataset = dataset_get(project=request_project(request), name=name)
        return jsonl_download(dataset, status_filter=params["status"])


class DatasetImport(APIView):
    required_scopes = {"POST": CURATE}

    @extend_schema(
        operation_id="datasets_import",
        summary="Import cases from JSON Lines (all or nothing)",
        description=(
            "The body is JSONL (any content type): one case per line, `name` required, keys as in the export. "
            "Every line is checked first; a bad line is a 400 whose `errors` give its `line` number and `field`, "
            "and nothing is written. A line whose `name` is already a case of the dataset updates that case (with a "
            "revision; an identical line changes nothing); other cases are created. A line that contradicts where a "
            "stored case came from (`source_trace_id`) is a 409 naming the line. 201 when a case was created, else "
            "200."
        ),
        # Any content type is read as JSONL; text/plain and application/octet-stream are listed
        # for clients (and client generators) that know no other.
        request={
            JSONL_MEDIA_TYPE: OpenApiTypes.STR,
            "text/plain": OpenApiTypes.STR,
            "application/octet-stream": OpenApiTypes.BINARY,
        },
        responses={
            201: OpenApiResponse(ImportOut, description="At least one case was created."),
            200: OpenApiResponse(ImportOut, description="Cases were updated or already matched the file."),
            **problem_responses(400, 401, 404, 409, 413),
        },
    )
    def post(self, request, name):
        dataset = dataset_get(project=request_project(request), name=name)
        result = cases_import(dataset=dataset, body=request.body, by=request.auth)
        return Response(result.as_dict(), status=status.HTTP_201_CREATED if result.created else status.HTTP_200_OK)


class ExpectationsSchema(APIView):
    authentication_classes = []
    permission_classes = [AllowAny]

    @extend_schema(
        operation_id="schemas_expectations",
        summary="The JSON Schema of a case's expectations (no key needed)",
        description="Draft 7. Unknown keys are refused, so a typo is a 400 naming the field.",
        responses={200: OpenApiResponse(OpenApiTypes.OBJECT, description="The JSON Schema.")},
        auth=[],
    )
    def get(self, request):
        return Response(EXPECTATIONS_SCHEMA)
