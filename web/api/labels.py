"""HTTP API of labels: label configs, labels on runs (human scores), and a judge criterion's agreement with them.

``label-configs`` (GET, POST; ``label-configs/{name}`` GET, PATCH: archived, never
deleted), ``traces/{trace_id}/labels`` (POST a label, GET the run's labels), and
``judge/criteria/{name}/agreement``. The rules are ``scoring.labels`` and
``scoring.judge.calibration``; docs/labels.md is the reference.
"""

from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from datasets.run_selectors import trace_get
from evalsite.auth import request_project
from evalsite.scopes import CURATE, LABEL
from scoring.judge.calibration import agreement, disagreements
from scoring.labels import (
    label_config_create,
    label_config_get,
    label_config_list,
    label_config_update,
    label_write,
    run_labels,
)
from scoring.models import LabelConfig, LabelKind
from web.api.openapi import PAGE_PARAMETERS, paginated, problem_responses, request_component
from web.api.rest import NewestFirstCursorPagination, Text, validated
from web.api.shapes import CriterionAgreementOut, LabelHistoryEntry, LabelValue, shaped

_TEXTS = shaped(serializers.JSONField, serializers.ListField(child=serializers.CharField(), allow_null=True), "Texts")


class LabelConfigOut(serializers.ModelSerializer):
    options = _TEXTS(help_text="categorical: the categories; null for the other kinds.")
    passing = _TEXTS(help_text="categorical: those that pass; null for the other kinds.")

    class Meta:
        model = LabelConfig
        fields = [
            "name", "description", "kind", "options", "passing", "minimum", "maximum", "pass_threshold",
            "criterion", "archived", "created_at", "updated_at",
        ]  # fmt: skip


LABEL_CONFIG_REQUEST = {
    "type": "object",
    "required": ["name"],
    "properties": {
        "name": {"type": "string", "minLength": 1, "maxLength": 100, "description": "Unique in the project; no ':'."},
        "description": {"type": "string"},
        "kind": {"enum": list(LabelKind.values), "default": "boolean"},
        "options": {
            "type": ["array", "null"],
            "items": {"type": "string"},
            "description": "categorical: the categories.",
        },
        "passing": {
            "type": ["array", "null"],
            "items": {"type": "string"},
            "description": "categorical: those that pass.",
        },
        "minimum": {"type": ["number", "null"]},
        "maximum": {"type": ["number", "null"]},
        "pass_threshold": {"type": ["number", "null"], "description": "numeric: a label at least this passes."},
        "archived": {"type": "boolean"},
    },
}


class LabelIn(serializers.Serializer):
    config = Text(max_length=100, help_text="The label config's name.")
    value = LabelValue()
    comment = serializers.CharField(required=False, allow_blank=True, default="", max_length=2000)


class LabelOut(serializers.Serializer):
    config = serializers.SerializerMethodField()
    value = serializers.SerializerMethodField()
    passed = serializers.BooleanField()
    comment = serializers.CharField(source="reason")
    author = serializers.SerializerMethodField()
    history = serializers.SerializerMethodField()
    created_at = serializers.DateTimeField()

    def get_config(self, score) -> str:
        return score.scorer.split(":", 1)[1]

    @extend_schema_field(LabelValue())
    def get_value(self, score):
        return score.detail.get("label")

    def get_author(self, score) -> str:
        return score.detail.get("author", "")

    @extend_schema_field(LabelHistoryEntry)
    def get_history(self, score):
        return score.detail.get("history", [])


class ConfigPagination(NewestFirstCursorPagination):
    ordering = ("name",)


class LabelPagination(NewestFirstCursorPagination):
    ordering = ("scorer", "id")


class LabelConfigCollection(APIView):
    required_scopes = {"POST": CURATE}

    @extend_schema(
        operation_id="label_configs_list",
        summary="The project's label configs, by name (archived ones included)",
        parameters=PAGE_PARAMETERS,
        responses={200: paginated("PaginatedLabelConfigList", LabelConfigOut), **problem_responses(400, 401)},
    )
    def get(self, request):
        paginator = ConfigPagination()
        page = paginator.paginate_queryset(label_config_list(project=request_project(request)), request, view=self)
        return paginator.get_paginated_response(LabelConfigOut(page, many=True).data)

    @extend_schema(
        operation_id="label_configs_create",
        summary="Define a label: boolean, categorical (options, passing) or numeric (minimum, maximum, pass_threshold)",
        request=request_component("LabelConfigInRequest", LABEL_CONFIG_REQUEST),
        responses={201: LabelConfigOut, **problem_responses(400, 401)},
    )
    def post(self, request):
        config = label_config_create(project=request_project(request), data=request.data)
        return Response(LabelConfigOut(config).data, status=status.HTTP_201_CREATED)


class LabelConfigDetail(APIView):
    required_scopes = {"PATCH": CURATE}

    @extend_schema(
        operation_id="label_configs_retrieve", responses={200: LabelConfigOut, **problem_responses(401, 404)}
    )
    def get(self, request, name):
        return Response(LabelConfigOut(label_config_get(project=request_project(request), name=name)).data)

    @extend_schema(
        operation_id="label_configs_update",
        summary="Change a label config's description, options' passing set or threshold, or archive it",
        description="The name and the kind cannot change: labels already given keep their meaning.",
        request=request_component("LabelConfigInRequest", LABEL_CONFIG_REQUEST),
        responses={200: LabelConfigOut, **problem_responses(400, 401, 404)},
    )
    def patch(self, request, name):
        config = label_config_get(project=request_project(request), name=name)
        return Response(LabelConfigOut(label_config_update(config=config, data=request.data)).data)


class TraceLabels(APIView):
    required_scopes = {"POST": LABEL}

    @extend_schema(
        operation_id="traces_labels_create",
        summary="Label a run (a reviewer's verdict; end users' feedback has traces/{trace_id}/feedback)",
        description="The author is the API key's name. A second label by the same author replaces the first (kept "
        "in `history`). A value of the wrong kind or out of range is a 400 naming `value`.",
        request=LabelIn,
        responses={
            201: OpenApiResponse(LabelOut, description="A new label."),
            200: OpenApiResponse(LabelOut, description="The author's label, changed or as it was."),
            **problem_responses(400, 401, 404, 429),
        },
    )
    def post(self, request, trace_id):
        project = request_project(request)
        data = validated(LabelIn, request.data)
        trace = trace_get(project=project, trace_id=trace_id)
        config = label_config_get(project=project, name=data["config"])
        key = request.auth
        score, created = label_write(
            project=project, trace=trace, config=config, value=data["value"], comment=data["comment"],
            author={"name": key.name or key.prefix, "by": "key"},
        )  # fmt: skip
        return Response(LabelOut(score).data, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)

    @extend_schema(
        operation_id="traces_labels_list",
        summary="A run's labels, by config then author",
        parameters=PAGE_PARAMETERS,
        responses={200: paginated("PaginatedLabelList", LabelOut), **problem_responses(400, 401, 404)},
    )
    def get(self, request, trace_id):
        trace = trace_get(project=request_project(request), trace_id=trace_id)
        paginator = LabelPagination()
        page = paginator.paginate_queryset(run_labels(trace), request, view=self)
        return paginator.get_paginated_response(LabelOut(page, many=True).data)


class CriterionAgreement(APIView):
    @extend_schema(
        operation_id="judge_criteria_agreement",
        summary="How well a judge criterion agrees with reviewers' labels of the same name",
        description="Over runs with both a judge score and reviewers' labels: n, accuracy, Cohen's kappa, the "
        "confusion matrix (rows: reviewers, columns: the judge) and the runs where they disagree.",
        responses={200: CriterionAgreementOut, **problem_responses(401, 404)},
    )
    def get(self, request, name):
        project = request_project(request)
        label_config_get(project=project, name=name, field="name")
        return Response(
            {
                **agreement(project=project, criterion=name).as_dict(),
                "disagreements": disagreements(project=project, criterion=name),
            }
        )
