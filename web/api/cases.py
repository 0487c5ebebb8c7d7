"""HTTP API of golden cases: create, list, read, edit and archive them, and capture runs as cases.

Views are thin: the services in ``datasets.cases`` and ``datasets.capture`` validate
every field (the same rules serve the browser pages and JSONL lines) and do every
write; the request bodies are documented by the JSON Schemas those rules publish, so
the documentation cannot drift from them. The selectors in ``datasets.case_selectors``
scope every read to the key's project.
"""

from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from checks.expectations import EXPECTATIONS_SCHEMA
from checks.scorers import answer_is_checked
from datasets.case_selectors import (
    ALL_STATUSES,
    case_get,
    case_list,
    case_revisions,
    dataset_get,
)
from datasets.case_validation import CASE_EDITABLE_FIELDS, case_request_schema
from datasets.cases import case_archive, case_create, case_update
from datasets.models import CaseRevision, CaseStatus, GoldenCase
from evalsite.auth import request_project
from evalsite.scopes import CURATE
from gating.history import DEFAULT_EXPERIMENTS, case_history, cases_flaky
from scoring.review.capture_guard import GUARDED_CAPTURE_SCHEMA, cases_capture_guarded
from web.api.openapi import PAGE_PARAMETERS, paginated, problem_responses, request_component
from web.api.rest import AnyJson, NewestFirstCursorPagination, validated
from web.api.shapes import CaseHistoryOut

# The schema as an OpenAPI 3.1 component: the draft-07 "$schema" marker stays in the
# published copy served at GET /v1/api/schemas/expectations.
_EXPECTATIONS_COMPONENT = {k: v for k, v in EXPECTATIONS_SCHEMA.items() if k != "$schema"}


@extend_schema_field(_EXPECTATIONS_COMPONENT)
class ExpectationsField(serializers.JSONField):
    pass


class CaseOut(serializers.ModelSerializer):
    dataset = serializers.CharField(source="dataset.name")
    input = AnyJson(help_text="The case's input: text or any JSON value.")
    expected_output = AnyJson(help_text="The expected answer: text or any JSON value; null when none is written.")
    expectations = ExpectationsField()
    needs_expected_output = serializers.BooleanField(
        help_text="True while the case has no expected answer (a reviewer has to write one)."
    )
    answer_checked = serializers.SerializerMethodField(
        help_text="False when the case has an expected answer that no check reads (no answer_check, regex or none)."
    )
    source_run_available = serializers.SerializerMethodField(
        help_text="Whether the run named by source_trace_id is still stored."
    )

    class Meta:
        model = GoldenCase
        fields = [
            "id", "dataset", "name", "input", "expected_output", "expectations", "status", "notes", "metadata",
            "version", "source_trace_id", "source_run_available", "needs_expected_output", "answer_checked",
            "quarantined", "quarantine_reason", "created_at", "updated_at",
        ]  # fmt: skip

    def get_answer_checked(self, case) -> bool:
        return answer_is_checked(case.expected_output, case.expectations)

    def get_source_run_available(self, case) -> bool:
        return case.source_run_id is not None


class RevisionOut(serializers.ModelSerializer):
    old = AnyJson(help_text="The value before the change (null for a creation).")
    new = AnyJson(help_text="The value after the change.")
    changed_by = serializers.CharField(
        source="changed_by.get_username", allow_null=True, default=None, help_text="The user who made the change."
    )
    changed_by_key = serializers.SerializerMethodField(help_text="The API key that made the change (its name).")

    class Meta:
        model = CaseRevision
        fields = ["version", "action", "changed_by", "changed_by_key", "changed_at", "old", "new"]

    def get_changed_by_key(self, revision) -> str | None:
        key = revision.changed_by_key
        return None if key is None else (key.name or key.prefix)


class CaseDetailOut(CaseOut):
    revisions = serializers.SerializerMethodField(help_text="Every change of the case, newest first.")

    class Meta(CaseOut.Meta):
        fields = CaseOut.Meta.fields + ["revisions"]

    @extend_schema_field(RevisionOut(many=True))
    def get_revisions(self, case):
        return RevisionOut(case_revisions(case=case), many=True).data


CaptureOut = inline_serializer(
    "CaptureResult",
    {
        "created": serializers.IntegerField(help_text="Cases created by this request."),
        "existing": serializers.IntegerField(help_text="Runs the dataset already held (returned unchanged)."),
        "skipped": inline_serializer(
            "CaptureSkipped",
            {
                "trace_id": serializers.CharField(),
                "failed_checks": serializers.ListField(child=serializers.CharField()),
            },
            many=True,
            help_text="Runs left out: their answer was asked for as the reference, and they failed a check.",
        ),
        "cases": inline_serializer(
            "CapturedCase",
            {
                "trace_id": serializers.CharField(),
                "status": serializers.CharField(help_text="created, or existing (the dataset already held the run)."),
                "case": CaseOut(),
            },
            many=True,
        ),
    },
)


CASE_CREATE_REQUEST = case_request_schema()
CASE_EDIT_REQUEST = case_request_schema(
    allowed=CASE_EDITABLE_FIELDS,
    required=(),
    extra={
        "version": {
            "type": "integer",
            "minimum": 1,
            "description": "The version this edit is based on; a newer stored version is a 409.",
        }
    },
)


class CaseFilters(serializers.Serializer):
    status = serializers.ChoiceField(
        [*CaseStatus.values, ALL_STATUSES], required=False, default=CaseStatus.ACTIVE,
        help_text="Cases with this status (default active), or all.",
    )  # fmt: skip
    needs_expected_output = serializers.BooleanField(
        required=False, allow_null=True, default=None, help_text="Only cases with (false) or without (true) one."
    )
    flaky = serializers.BooleanField(
        required=False, default=False, help_text="Only cases that were flaky in any of the last `experiments` gated."
    )
    experiments = serializers.IntegerField(
        required=False, min_value=1, max_value=200, default=DEFAULT_EXPERIMENTS,
        help_text="How many recent experiments `flaky` looks at (default 20).",
    )  # fmt: skip


class HistoryQuery(serializers.Serializer):
    limit = serializers.IntegerField(required=False, min_value=1, max_value=200, default=DEFAULT_EXPERIMENTS)


class CasePagination(NewestFirstCursorPagination):
    ordering = ("id",)


class CaseCollection(APIView):
    required_scopes = {"POST": CURATE}

    @extend_schema(
        operation_id="cases_create",
        summary="Create a case in a dataset",
        description="Unknown fields and expectations that do not follow the published schema are a 400 naming "
        "the field (`expectations.tool_match`). A taken name, or a `source_trace_id` the dataset already holds, "
        "is a 409. The case starts at version 1 with a `created` revision.",
        request=request_component("CaseInRequest", CASE_CREATE_REQUEST),
        responses={201: CaseOut, **problem_responses(400, 401, 404, 409)},
    )
    def post(self, request, name):
        dataset = dataset_get(project=request_project(request), name=name)
        case = case_create(dataset=dataset, data=request.data, by=request.auth)
        return Response(CaseOut(case).data, status=status.HTTP_201_CREATED)

    @extend_schema(
        operation_id="cases_list",
        summary="List a dataset's cases (active ones by default), in id order",
        description="What CI runs: each case's id, name, input, expected answer and expectations.",
        parameters=[CaseFilters, *PAGE_PARAMETERS],
        responses={200: paginated("PaginatedCaseList", CaseOut), **problem_responses(400, 401, 404)},
    )
    def get(self, request, name):
        filters = validated(CaseFilters, request.query_params)
        dataset = dataset_get(project=request_project(request), name=name)
        cases = case_list(
            dataset=dataset, status=filters["status"], needs_expected_output=filters["needs_expected_output"]
        )
        if filters["flaky"]:
            cases = cases_flaky(cases, dataset=dataset, limit=filters["experiments"])
        paginator = CasePagination()
        page = paginator.paginate_queryset(cases, request, view=self)
        return paginator.get_paginated_response(CaseOut(page, many=True).data)


class CaseCapture(APIView):
    required_scopes = {"POST": CURATE}

    @extend_schema(
        operation_id="cases_capture",
        summary="Capture runs as cases (one case per run)",
        description=(
            "Each new case takes the run's `input` and keeps `source_trace_id`. `use_output_as_expected` is "
            "**false** by default: the case has no expected answer (`needs_expected_output: true`) until a reviewer "
            "writes one or the request gives `expected_output`. A run the dataset already holds is returned "
            "unchanged with status `existing` (no twin). A run that is not in the project is a 400 naming "
            "`trace_ids[i]`; nothing is written. 201 when a case was created, else 200. With "
            "`use_output_as_expected`, a run that failed a check is refused (409 naming its failed checks) unless "
            "`accept_failed_output: true`; among several runs, the failing ones are skipped and listed in `skipped`."
        ),
        request=request_component("CaptureInRequest", GUARDED_CAPTURE_SCHEMA),
        responses={
            201: OpenApiResponse(CaptureOut, description="At least one case was created."),
            200: OpenApiResponse(CaptureOut, description="Every run was already captured."),
            **problem_responses(400, 401, 404, 409),
        },
    )
    def post(self, request, name):
        dataset = dataset_get(project=request_project(request), name=name)
        captured, skipped = cases_capture_guarded(dataset=dataset, data=request.data, by=request.auth)
        created = sum(c.created for c in captured)
        body = {
            "created": created,
            "existing": len(captured) - created,
            "skipped": skipped,
            "cases": [
                {"trace_id": c.trace_id, "status": "created" if c.created else "existing", "case": CaseOut(c.case).data}
                for c in captured
            ],
        }
        return Response(body, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)


class CaseDetail(APIView):
    required_scopes = {"PATCH": CURATE, "DELETE": CURATE}

    @extend_schema(
        operation_id="cases_retrieve",
        summary="One case with its revision history",
        responses={200: CaseDetailOut, **problem_responses(401, 404)},
    )
    def get(self, request, case_id):
        return Response(CaseDetailOut(case_get(project=request_project(request), case_id=case_id)).data)

    @extend_schema(
        operation_id="cases_update",
        summary="Edit a case (a new revision)",
        description=(
            "Send only the fields to change. A change bumps `version` and writes a revision with the old and new "
            "values (`archived` / `restored` when `status` leaves or returns from archived). An edit that changes "
            "nothing writes nothing. With `version`, an edit based on an older version is a 409."
        ),
        request=request_component("CasePatchInRequest", CASE_EDIT_REQUEST),
        responses={200: CaseDetailOut, **problem_responses(400, 401, 404, 409)},
    )
    def patch(self, request, case_id):
        case = case_get(project=request_project(request), case_id=case_id)
        case, _ = case_update(case=case, data=request.data, by=request.auth)
        return Response(CaseDetailOut(case).data)

    @extend_schema(
        operation_id="cases_archive",
        summary="Archive a case (never a delete)",
        description="The case stays, with its history, as `archived` (PATCH `status: active` restores it). "
        "Archiving an archived case changes nothing.",
        responses={200: CaseDetailOut, **problem_responses(401, 404, 409)},
    )
    def delete(self, request, case_id):
        case = case_get(project=request_project(request), case_id=case_id)
        case, _ = case_archive(case=case, by=request.auth)
        return Response(CaseDetailOut(case).data)


class CaseHistory(APIView):
    @extend_schema(
        operation_id="cases_history",
        summary="A case's outcome in each of its last experiments, newest first, with its trials",
        description="From the gate runs that judged the case: per experiment the newest one's outcome (passed, "
        "failed, unmeasured), whether it was flaky, and each trial. `flip_rate` is the share of consecutive "
        "experiments whose outcomes differ.",
        parameters=[HistoryQuery],
        responses={200: CaseHistoryOut, **problem_responses(400, 401, 404)},
    )
    def get(self, request, case_id):
        query = validated(HistoryQuery, request.query_params)
        case = case_get(project=request_project(request), case_id=case_id)
        return Response({"case_id": case.pk, "name": case.name, **case_history(case=case, limit=query["limit"])})
