"""HTTP API of experiments: register and list versions of the agent, compare two of them."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from datasets.case_selectors import dataset_get
from datasets.experiments import experiment_get, experiment_list, experiment_register
from datasets.models import Experiment
from evalsite.auth import request_project
from evalsite.scopes import INGEST
from gating.comparison import experiments_compare
from web.api.openapi import PAGE_PARAMETERS, paginated, problem_responses
from web.api.rest import NewestFirstCursorPagination, Text, validated
from web.api.shapes import Flipped, shaped


class ExperimentOut(serializers.ModelSerializer):
    dataset = serializers.CharField(source="dataset.name", allow_null=True, default=None)

    class Meta:
        model = Experiment
        fields = ["name", "dataset", "metadata", "created_at"]


class ExperimentIn(serializers.Serializer):
    name = Text(max_length=200)
    dataset = Text(max_length=100, required=False, allow_null=True)
    metadata = serializers.DictField(
        required=False, help_text="Facts about the version: commit, branch, model, prompt version."
    )


class ExperimentCollection(APIView):
    required_scopes = {"POST": INGEST}

    @extend_schema(
        operation_id="experiments_create",
        summary="Register an experiment (a version of the agent)",
        description="Creates the experiment, or updates the metadata of an existing one with the same name "
        "(its keys are merged). An existing experiment's dataset cannot change: 409.",
        request=ExperimentIn,
        responses={201: ExperimentOut, 200: ExperimentOut, **problem_responses(400, 401, 404, 409)},
    )
    def post(self, request):
        project = request_project(request)
        data = validated(ExperimentIn, request.data)
        dataset = dataset_get(project=project, name=data["dataset"]) if data.get("dataset") else None
        experiment, created = experiment_register(
            project=project, name=data["name"], dataset=dataset, metadata=data.get("metadata", {})
        )
        return Response(
            ExperimentOut(experiment).data, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK
        )

    @extend_schema(
        operation_id="experiments_list",
        summary="List experiments, newest first",
        parameters=[
            OpenApiParameter("dataset", OpenApiTypes.STR, description="Only this dataset's experiments."),
            *PAGE_PARAMETERS,
        ],
        responses={200: paginated("PaginatedExperimentList", ExperimentOut), **problem_responses(401)},
    )
    def get(self, request):
        experiments = experiment_list(
            project=request_project(request), dataset_name=request.query_params.get("dataset")
        )
        paginator = NewestFirstCursorPagination()
        page = paginator.paginate_queryset(experiments, request, view=self)
        return paginator.get_paginated_response(ExperimentOut(page, many=True).data)


class ExperimentDetail(APIView):
    @extend_schema(operation_id="experiments_retrieve", responses={200: ExperimentOut, **problem_responses(401, 404)})
    def get(self, request, name):
        return Response(ExperimentOut(experiment_get(project=request_project(request), name=name)).data)


class CompareQuery(serializers.Serializer):
    base = Text(max_length=200, help_text="The experiment compared against.")
    candidate = Text(max_length=200, help_text="The experiment being judged.")
    scorers = serializers.CharField(required=False, help_text="Comma-separated scorer ids (default: every scorer).")
    tolerance = serializers.FloatField(
        required=False, min_value=0, max_value=1, help_text="Drop in mean that counts as a regression (default 0)."
    )


_side = inline_serializer(
    "CompareSide",
    {
        "mean": serializers.FloatField(allow_null=True),
        "n": serializers.IntegerField(),
        "abstained": serializers.IntegerField(),
    },
)
# One row per scorer; the gate's answer carries the same rows as its `comparison`.
ScorerComparisonRows = inline_serializer(
    "ScorerComparison",
    {
        "scorer": serializers.CharField(),
        "scorer_version": serializers.CharField(allow_null=True),
        "base": _side,
        "candidate": _side,
        "diff": serializers.FloatField(allow_null=True),
        "decidable": serializers.BooleanField(),
        "regressed": serializers.BooleanField(),
        "ci95": serializers.ListField(child=serializers.FloatField(), allow_null=True),
    },
    many=True,
)
CompareOut = inline_serializer(
    "Comparison",
    {
        "base": serializers.CharField(),
        "candidate": serializers.CharField(),
        "tolerance": serializers.FloatField(),
        "min_decidable_n": serializers.IntegerField(),
        "scorers": ScorerComparisonRows,
        "flipped": shaped(serializers.DictField, Flipped, "FlippedField")(),
    },
)


class ExperimentCompare(APIView):
    @extend_schema(
        operation_id="experiments_compare",
        summary="Compare two experiments per scorer, with the sample size of each side",
        parameters=[CompareQuery],
        responses={200: CompareOut, **problem_responses(400, 401, 404)},
    )
    def get(self, request):
        project = request_project(request)
        query = validated(CompareQuery, request.query_params)
        base = experiment_get(project=project, name=query["base"], field="base")
        candidate = experiment_get(project=project, name=query["candidate"], field="candidate")
        scorers = [s.strip() for s in query.get("scorers", "").split(",") if s.strip()] or None
        return Response(
            experiments_compare(base=base, candidate=candidate, scorers=scorers, tolerance=query.get("tolerance", 0.0))
        )
