"""HTTP API of Harvest: production failures grouped (docs/harvest.md), and a dataset's coverage of them.

Reads are open to every key of the project; a rebuild needs ``curate``. A bad
``window`` is a 400 naming it; another project's group is a 404.
"""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from datasets.case_selectors import dataset_get
from evalsite.auth import request_project
from evalsite.errors import Invalid
from evalsite.scopes import CURATE
from harvest.selectors import (
    dataset_coverage,
    group_get,
    group_list,
    group_runs,
    groups_covered,
    representatives_of,
    window_parse,
)
from harvest.services import rebuild_request
from web.api.openapi import PAGE_PARAMETERS, paginated, problem_responses
from web.api.rest import AnyJson, CheckedCursorPagination

RUNS_SHOWN = 100
WINDOW = OpenApiParameter(
    "window", OpenApiTypes.STR, description="The window: hours or days back from now, 1h to 90d (default 7d)."
)
FILTERS = [
    WINDOW,
    OpenApiParameter("signature", OpenApiTypes.STR, description="Only the groups of this signature (exact)."),
    OpenApiParameter("scorer", OpenApiTypes.STR, description="Only the groups whose runs failed this check."),
]


class RunOut(serializers.Serializer):
    trace_id = serializers.CharField()
    input = AnyJson()
    started_at = serializers.DateTimeField()


class ReasonOut(serializers.Serializer):
    scorer = serializers.CharField()
    reason = serializers.CharField()
    n = serializers.IntegerField()


class GroupOut(serializers.Serializer):
    id = serializers.IntegerField()
    signature = serializers.CharField()
    checks = serializers.ListField(child=serializers.CharField(), help_text="Failed checks, feedback, abstentions.")
    tools = serializers.ListField(child=serializers.CharField(), help_text="The tool calls' shape (x+ repeated).")
    error_type = serializers.CharField(allow_blank=True)
    label = serializers.CharField(allow_blank=True, help_text="The inputs' most telling words.")
    window_size = serializers.IntegerField(help_text="Runs of the group started in the window.")
    previous_size = serializers.IntegerField(help_text="Runs in the window before it.")
    trend = serializers.IntegerField(help_text="window_size - previous_size.")
    size = serializers.IntegerField(help_text="Every run of the group, whatever the window.")
    covered = serializers.BooleanField(help_text="Whether an active case of the project covers the group.")
    covered_by = serializers.CharField(allow_null=True, help_text="source_trace_id, similar_input, or null.")
    representatives = RunOut(many=True)
    reasons = ReasonOut(many=True)
    updated_at = serializers.DateTimeField()


class GroupDetailOut(GroupOut):
    runs = RunOut(many=True, help_text=f"The window's runs, newest first (at most {RUNS_SHOWN}).")


def _run_out(run):
    return {"trace_id": run.trace_id, "input": run.input, "started_at": run.started_at}


def group_out(group, runs_by_pk, covered):
    return {
        **{f: getattr(group, f) for f in ("id", "signature", "checks", "tools", "error_type", "label", "size")},
        "window_size": group.window_size, "previous_size": group.previous_size,
        "trend": group.window_size - group.previous_size,
        "covered": group.pk in covered, "covered_by": covered.get(group.pk),
        "representatives": [_run_out(runs_by_pk[pk]) for pk in group.representatives if pk in runs_by_pk],
        "reasons": group.reasons, "updated_at": group.updated_at,
    }  # fmt: skip


class GroupPagination(CheckedCursorPagination):
    ordering = ("-window_size", "-id")
    page_size_query_param = "page_size"
    max_page_size = 500

    def decode_cursor(self, request):
        cursor = super().decode_cursor(request)
        if cursor is not None and cursor.position is not None and not cursor.position.isdigit():
            raise Invalid("The cursor is not one this list gave.",
                          errors=[{"field": "cursor", "message": "is not a cursor of this list"}])  # fmt: skip
        return cursor


def _text(request, name):
    value = request.query_params.get(name, "")
    if len(value) > 1000 or "\x00" in value:
        raise Invalid(f"{name} is too long.", errors=[{"field": name, "message": "must be at most 1000 characters"}])
    return value


class FailureGroupCollection(APIView):
    @extend_schema(
        operation_id="failure_groups_list",
        summary="Production failures grouped, biggest first in the window (docs/harvest.md)",
        parameters=[*FILTERS, *PAGE_PARAMETERS],
        responses={200: paginated("FailureGroupPage", GroupOut), **problem_responses(400, 401)},
    )
    def get(self, request):
        project = request_project(request)
        window = window_parse(request.query_params.get("window"))
        groups = group_list(project=project, window=window, signature=_text(request, "signature"),
                            scorer=_text(request, "scorer"))  # fmt: skip
        paginator = GroupPagination()
        page = paginator.paginate_queryset(groups, request, view=self)
        runs, covered = representatives_of(page), groups_covered(project=project, groups=page)
        return paginator.get_paginated_response([group_out(g, runs, covered) for g in page])


class FailureGroupDetail(APIView):
    @extend_schema(
        operation_id="failure_groups_retrieve",
        parameters=[WINDOW],
        responses={200: GroupDetailOut, **problem_responses(400, 401, 404)},
    )
    def get(self, request, group_id):
        project = request_project(request)
        window = window_parse(request.query_params.get("window"))
        group = group_get(project=project, group_id=group_id, window=window)
        out = group_out(group, representatives_of([group]), groups_covered(project=project, groups=[group]))
        out["runs"] = [_run_out(run) for run in group_runs(group, window=window)[:RUNS_SHOWN]]
        return Response(out)


class FailureGroupRebuild(APIView):
    required_scopes = {"POST": CURATE}

    @extend_schema(
        operation_id="failure_groups_rebuild",
        summary="Group every failing production run again, in a worker",
        request=None,
        responses={
            202: inline_serializer("FailureGroupRebuildOut", {"rebuild": serializers.CharField(help_text="queued")}),
            **problem_responses(401, 403),
        },
    )
    def post(self, request):
        rebuild_request(project=request_project(request))
        return Response({"rebuild": "queued"}, status=status.HTTP_202_ACCEPTED)


class CoverageOut(serializers.Serializer):
    window_runs = serializers.IntegerField(help_text="Failing production runs in the window.")
    covered_runs = serializers.IntegerField(help_text="Of them, runs in groups the dataset covers.")
    share = serializers.FloatField(allow_null=True, help_text="covered_runs / window_runs; null with none.")
    groups = serializers.IntegerField()
    covered_groups = serializers.IntegerField()
    uncovered = GroupOut(many=True, help_text="The biggest uncovered groups first (20 at most).")


class DatasetCoverage(APIView):
    @extend_schema(
        operation_id="datasets_coverage",
        summary="The share of production failures in groups the dataset's cases cover (docs/harvest.md)",
        parameters=[WINDOW],
        responses={200: CoverageOut, **problem_responses(400, 401, 404)},
    )
    def get(self, request, name):
        dataset = dataset_get(project=request_project(request), name=name)
        coverage = dataset_coverage(dataset=dataset, window=window_parse(request.query_params.get("window")))
        runs = representatives_of(coverage["uncovered"])
        coverage["uncovered"] = [group_out(g, runs, {}) for g in coverage["uncovered"]]
        return Response(coverage)
