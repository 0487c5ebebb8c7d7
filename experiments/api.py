"""HTTP API for experiments, their comparison, gate policies and the gate."""

from django.db import IntegrityError, transaction
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from datasets.case_selectors import dataset_get
from evalsite.auth import request_project
from evalsite.errors import Conflict, Invalid
from evalsite.openapi import problem_responses
from evalsite.rest import NewestFirstCursorPagination
from experiments.comparison import experiments_compare
from experiments.gating import gate_request
from experiments.models import Experiment, GateRun
from experiments.policies import policy_for, policy_update
from experiments.selectors import experiment_get, experiment_list, gate_run_get, gate_run_list
from scoring.catalog import scorers_available


class ExperimentOut(serializers.ModelSerializer):
    dataset = serializers.CharField(source="dataset.name", allow_null=True, default=None)

    class Meta:
        model = Experiment
        fields = ["name", "dataset", "metadata", "created_at"]


class ExperimentIn(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    dataset = serializers.CharField(max_length=100, required=False, allow_null=True)
    metadata = serializers.DictField(
        required=False, help_text="Facts about the version: commit, branch, model, prompt version."
    )


class ExperimentCollection(APIView):
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
        data = _valid(ExperimentIn, request.data)
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
        parameters=[OpenApiParameter("dataset", OpenApiTypes.STR, description="Only this dataset's experiments.")],
        responses={200: ExperimentOut(many=True), **problem_responses(401)},
    )
    def get(self, request):
        experiments = experiment_list(project=request_project(request))
        if request.query_params.get("dataset"):
            experiments = experiments.filter(dataset__name=request.query_params["dataset"])
        paginator = NewestFirstCursorPagination()
        page = paginator.paginate_queryset(experiments, request, view=self)
        return paginator.get_paginated_response(ExperimentOut(page, many=True).data)


def experiment_register(*, project, name, dataset, metadata):
    """``(experiment, created)``; an existing one merges ``metadata`` and keeps its dataset."""
    with transaction.atomic():
        experiment = Experiment.objects.select_for_update().filter(project=project, name=name).first()
        if experiment is None:
            try:
                with transaction.atomic():
                    return Experiment.objects.create(
                        project=project, name=name, dataset=dataset, metadata=metadata
                    ), True
            except IntegrityError:
                experiment = Experiment.objects.select_for_update().get(project=project, name=name)
        if dataset is not None and experiment.dataset_id not in (None, dataset.pk):
            raise Conflict(
                f"Experiment {name!r} belongs to dataset {experiment.dataset.name!r}.",
                errors=[{"field": "dataset", "message": f"is {experiment.dataset.name!r} for this experiment"}],
            )
        experiment.metadata = {**experiment.metadata, **metadata}
        experiment.dataset = experiment.dataset or dataset
        experiment.save(update_fields=["metadata", "dataset"])
        return experiment, False


class ExperimentDetail(APIView):
    @extend_schema(operation_id="experiments_retrieve", responses={200: ExperimentOut, **problem_responses(401, 404)})
    def get(self, request, name):
        return Response(ExperimentOut(experiment_get(project=request_project(request), name=name)).data)


class CompareQuery(serializers.Serializer):
    base = serializers.CharField(max_length=200, help_text="The experiment compared against.")
    candidate = serializers.CharField(max_length=200, help_text="The experiment being judged.")
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
CompareOut = inline_serializer(
    "Comparison",
    {
        "base": serializers.CharField(),
        "candidate": serializers.CharField(),
        "tolerance": serializers.FloatField(),
        "min_decidable_n": serializers.IntegerField(),
        "scorers": inline_serializer(
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
        ),
        "flipped": serializers.DictField(),
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
        query = _valid(CompareQuery, request.query_params)
        base = experiment_get(project=project, name=query["base"], field="base")
        candidate = experiment_get(project=project, name=query["candidate"], field="candidate")
        scorers = [s.strip() for s in query.get("scorers", "").split(",") if s.strip()] or None
        return Response(
            experiments_compare(base=base, candidate=candidate, scorers=scorers, tolerance=query.get("tolerance", 0.0))
        )


class GatePolicyIO(serializers.Serializer):
    min_pass_rate = serializers.FloatField(
        min_value=0, max_value=1, required=False, help_text="The floor (default 1.0). Cannot be lowered here."
    )
    ratchet = serializers.BooleanField(required=False)
    fail_on_regression = serializers.BooleanField(required=False)
    tolerance = serializers.FloatField(min_value=0, max_value=1, required=False)
    scorers = serializers.ListField(
        child=serializers.CharField(max_length=100), required=False, help_text="Extra gating scorers."
    )
    max_abstained = serializers.IntegerField(min_value=0, max_value=1_000_000, required=False)
    baseline = serializers.CharField(
        max_length=200, required=False, allow_null=True, help_text="Baseline experiment name."
    )


def _policy_out(policy):
    changes = policy.floor_changes.all()[:20] if policy.pk else []
    return {
        "dataset": policy.dataset.name,
        "min_pass_rate": policy.min_pass_rate,
        "ratchet": policy.ratchet,
        "fail_on_regression": policy.fail_on_regression,
        "tolerance": policy.tolerance,
        "scorers": policy.scorers,
        "max_abstained": policy.max_abstained,
        "baseline": policy.baseline.name if policy.baseline else None,
        "floor_history": [
            {
                "old_floor": c.old_floor,
                "new_floor": c.new_floor,
                "source": c.source,
                "reason": c.reason,
                "at": c.created_at,
            }
            for c in changes
        ],
    }


class GatePolicyView(APIView):
    @extend_schema(
        operation_id="gate_policy_retrieve", responses={200: OpenApiTypes.OBJECT, **problem_responses(401, 404)}
    )
    def get(self, request, name):
        return Response(_policy_out(policy_for(dataset_get(project=request_project(request), name=name))))

    @extend_schema(
        operation_id="gate_policy_update",
        description="Change any of the fields given. Raising the floor is recorded in the floor history; lowering it "
        "is a 409 (only a project admin can, in the admin, with a written reason).",
        request=GatePolicyIO,
        responses={200: OpenApiTypes.OBJECT, **problem_responses(400, 401, 404, 409)},
    )
    def put(self, request, name):
        project = request_project(request)
        dataset = dataset_get(project=project, name=name)
        changes = _valid(GatePolicyIO, request.data)
        if "scorers" in changes:
            available = scorers_available(project=project)
            unknown = [s for s in changes["scorers"] if s not in available]
            if unknown:
                raise Invalid(
                    "Unknown scorers.",
                    errors=[
                        {"field": "scorers", "message": f"unknown scorer {s!r}; known: {', '.join(sorted(available))}"}
                        for s in unknown
                    ],
                )
        if "baseline" in changes and changes["baseline"] is not None:
            changes["baseline"] = experiment_get(project=project, name=changes["baseline"], field="baseline")
        policy = policy_update(dataset=dataset, changes=changes, key=request.auth)
        return Response(_policy_out(policy))


class GateIn(serializers.Serializer):
    dataset = serializers.CharField(max_length=100)
    experiment = serializers.CharField(max_length=200)
    baseline = serializers.CharField(
        max_length=200, required=False, allow_null=True, help_text="Default: the policy's baseline."
    )
    set_baseline = serializers.BooleanField(
        default=False, help_text="On PASS, record this experiment as the baseline (and ratchet the floor)."
    )


GateAccepted = inline_serializer(
    "GateAccepted", {"gate_run_id": serializers.IntegerField(), "status": serializers.CharField()}
)


def gate_run_answer(gate_run):
    if gate_run.status == GateRun.Status.DONE:
        return gate_run.result
    answer = {
        "gate_run_id": gate_run.pk,
        "status": gate_run.status,
        "dataset": gate_run.dataset.name,
        "experiment": gate_run.experiment.name,
    }
    if gate_run.status == GateRun.Status.FAILED:
        answer["error"] = gate_run.error
    return answer


class GateView(APIView):
    @extend_schema(
        operation_id="gate",
        summary="Ask the gate for a verdict (PASS or FAIL) on an experiment's runs of a dataset",
        description="Scores whatever is missing for the experiment's runs of the dataset's active cases, then answers "
        "with the verdict (docs/gate.md). For a large dataset the answer is 202 with a gate run id to poll.",
        request=GateIn,
        responses={
            200: OpenApiResponse(OpenApiTypes.OBJECT, description="The verdict."),
            202: OpenApiResponse(GateAccepted, description="A worker is evaluating it; poll GET gate-runs/{id}."),
            **problem_responses(400, 401, 404, 429),
        },
    )
    def post(self, request):
        data = _valid(GateIn, request.data)
        gate_run = gate_request(
            project=request_project(request), dataset_name=data["dataset"], experiment_name=data["experiment"],
            baseline_name=data.get("baseline"), set_baseline=data["set_baseline"], key=request.auth,
        )  # fmt: skip
        if gate_run.status == GateRun.Status.RUNNING:
            return Response(gate_run_answer(gate_run), status=status.HTTP_202_ACCEPTED)
        return Response(gate_run_answer(gate_run))


GateRunSummaries = inline_serializer(
    "GateRunSummary",
    many=True,
    fields={
        "gate_run_id": serializers.IntegerField(),
        "status": serializers.CharField(),
        "dataset": serializers.CharField(),
        "experiment": serializers.CharField(),
        "baseline": serializers.CharField(allow_null=True),
        "verdict": serializers.CharField(allow_null=True),
        "pass_rate": serializers.FloatField(allow_null=True),
        "floor": serializers.FloatField(allow_null=True),
        "passed_cases": serializers.IntegerField(),
        "total_cases": serializers.IntegerField(),
        "created_at": serializers.DateTimeField(),
    },
)


class GateRunPagination(NewestFirstCursorPagination):
    ordering = ("-created_at", "-id")


class GateRunCollection(APIView):
    @extend_schema(
        operation_id="gate_runs_list",
        parameters=[
            OpenApiParameter("dataset", OpenApiTypes.STR),
            OpenApiParameter("experiment", OpenApiTypes.STR),
            OpenApiParameter("verdict", OpenApiTypes.STR, enum=["PASS", "FAIL"]),
        ],
        responses={200: GateRunSummaries, **problem_responses(401)},
    )
    def get(self, request):
        q = request.query_params
        runs = gate_run_list(
            project=request_project(request),
            dataset=q.get("dataset"),
            experiment=q.get("experiment"),
            verdict=q.get("verdict"),
        )
        paginator = GateRunPagination()
        page = paginator.paginate_queryset(runs, request, view=self)
        return paginator.get_paginated_response([_summary(r) for r in page])


def _summary(run):
    return {
        "gate_run_id": run.pk,
        "status": run.status,
        "dataset": run.dataset.name,
        "experiment": run.experiment.name,
        "baseline": run.baseline.name if run.baseline else None,
        "verdict": run.verdict,
        "pass_rate": run.pass_rate,
        "floor": run.floor,
        "passed_cases": run.passed_cases,
        "total_cases": run.total_cases,
        "created_at": run.created_at,
    }


class GateRunDetail(APIView):
    @extend_schema(
        operation_id="gate_runs_retrieve", responses={200: OpenApiTypes.OBJECT, **problem_responses(401, 404)}
    )
    def get(self, request, gate_run_id):
        return Response(gate_run_answer(gate_run_get(project=request_project(request), gate_run_id=gate_run_id)))


def _valid(serializer_class, data):
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data
