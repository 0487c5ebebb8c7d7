"""HTTP API of the gate: a dataset's gate policy, the verdict (``POST gate``) and past gate runs.

Answers about a gate run carry links for people: ``url`` (the gate run's page) and, per
case, ``run_url`` (the run's page), absolute from ``EVALSITE_PUBLIC_URL`` when it is
set, else from the request. They are added when answering, not stored.
"""

from urllib.parse import quote, urlencode

from django.conf import settings
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    PolymorphicProxySerializer,
    extend_schema,
)
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from datasets.case_selectors import dataset_get
from datasets.experiments import experiment_get
from evalsite.auth import request_project
from evalsite.errors import Invalid
from evalsite.scopes import CURATE, GATE
from gating.case_pages import ORDERS as CASE_ORDERS
from gating.case_pages import case_page
from gating.evaluation import gate_request
from gating.models import GateRun
from gating.policies import policy_for, policy_update
from gating.revisions import policy_revisions, revision_as_dict
from gating.selectors import gate_run_answer, gate_run_get, gate_run_list
from web.api.gate_schema import (
    GateAccepted,
    GateCasePage,
    GateRunPending,
    GateVerdict,
    PolicyRevisionOut,
)
from web.api.openapi import PAGE_PARAMETERS, paginated, problem_responses
from web.api.policy_io import GatePolicyIO, GatePolicyOut, policy_answer
from web.api.rest import NewestFirstCursorPagination, Text, validated


class _GateRunUrl(serializers.URLField):
    """A gate run's page, from its id (``context``: the request and the project)."""

    def to_representation(self, pk):
        return gate_run_url(self.context["request"], self.context["project"], pk)


# One gate run in the list (GET gate-runs): writes the answer and documents it (a
# docstring here would become the schema's description).
class GateRunSummary(serializers.Serializer):
    gate_run_id = serializers.IntegerField(source="pk")
    url = _GateRunUrl(source="pk", help_text="The gate run's page.")
    status = serializers.ChoiceField(GateRun.Status.choices)
    dataset = serializers.CharField(source="dataset.name")
    experiment = serializers.CharField(source="experiment.name")
    baseline = serializers.CharField(source="baseline.name", allow_null=True)
    verdict = serializers.CharField(allow_null=True)
    pass_rate = serializers.FloatField(allow_null=True)
    floor = serializers.FloatField(allow_null=True)
    passed_cases = serializers.IntegerField()
    total_cases = serializers.IntegerField()
    created_at = serializers.DateTimeField()


class GatePolicyView(APIView):
    required_scopes = {"PUT": CURATE}

    @extend_schema(operation_id="gate_policy_retrieve", responses={200: GatePolicyOut, **problem_responses(401, 404)})
    def get(self, request, name):
        return Response(policy_answer(policy_for(dataset_get(project=request_project(request), name=name))))

    @extend_schema(
        operation_id="gate_policy_update",
        description="Change any of the fields given; each change is a revision (GET .../gate-policy/history). A "
        "change that loosens the gate (docs/gate.md, 'What can move the bar') needs an `admin` key and a `reason`. "
        "Raising the floor is recorded in the floor history; lowering it is a 409 (only a project admin can, in "
        "the admin, with a written reason).",
        request=GatePolicyIO,
        responses={200: GatePolicyOut, **problem_responses(400, 401, 403, 404, 409)},
    )
    def put(self, request, name):
        project = request_project(request)
        dataset = dataset_get(project=project, name=name)
        changes = validated(GatePolicyIO, request.data)
        reason = changes.pop("reason", "")
        if "baseline" in changes and changes["baseline"] is not None:
            changes["baseline"] = experiment_get(project=project, name=changes["baseline"], field="baseline")
        policy = policy_update(dataset=dataset, changes=changes, reason=reason, key=request.auth)
        return Response(policy_answer(policy))


class RevisionPagination(NewestFirstCursorPagination):
    ordering = ("-number",)


class GatePolicyHistory(APIView):
    @extend_schema(
        operation_id="gate_policy_history",
        summary="The gate policy's revisions, newest first",
        parameters=PAGE_PARAMETERS,
        responses={200: paginated("PolicyRevisionPage", PolicyRevisionOut), **problem_responses(401, 404)},
    )
    def get(self, request, name):
        dataset = dataset_get(project=request_project(request), name=name)
        paginator = RevisionPagination()
        page = paginator.paginate_queryset(policy_revisions(dataset), request, view=self)
        return paginator.get_paginated_response([revision_as_dict(r) for r in page])


class GateIn(serializers.Serializer):
    dataset = Text(max_length=100)
    experiment = Text(max_length=200)
    baseline = serializers.CharField(
        max_length=200, required=False, allow_null=True, help_text="Default: the policy's baseline."
    )
    set_baseline = serializers.BooleanField(
        default=False, help_text="On PASS, record this experiment as the baseline (and ratchet the floor)."
    )
    init_floor = serializers.BooleanField(
        default=False,
        help_text="With set_baseline, on a dataset with no baseline yet: record it pass or fail and start the "
        "floor at its pass rate.",
    )


# Characters Django's reverse() leaves as they are in a path: a run link is built once
# per case, so the prefix is reversed once and each trace id quoted the same way.
_PATH_SAFE = "!$&'()*+,;=/~:@"


def site_root(request):
    """Where people reach this site: EVALSITE_PUBLIC_URL, else the request's scheme and host."""
    return settings.EVALSITE_PUBLIC_URL or request.build_absolute_uri("/").rstrip("/")


def gate_run_url(request, project, gate_run_id):
    return site_root(request) + reverse("gate-run", kwargs={"slug": project.slug, "gate_run_id": gate_run_id})


def linked_answer(gate_run, *, request, project):
    """The answer about ``gate_run`` (``gating.selectors.gate_run_answer``) with links to its page and
    runs, and ``cases_next`` / ``quarantined_next`` as links to the rest of its cases."""
    answer = gate_run_answer(gate_run)
    linked = {**answer, "url": gate_run_url(request, project, gate_run.pk)}
    runs = site_root(request) + reverse("runs", kwargs={"slug": project.slug})
    for key, quarantined in (("cases", "false"), ("quarantined", "true")):
        if key in answer:
            linked[key] = [case_linked(case, runs) for case in answer[key]]
            cursor = answer[f"{key}_next"]
            linked[f"{key}_next"] = cursor and cases_link(
                request, gate_run.pk, {"quarantined": quarantined, "cursor": cursor}
            )
    return linked


def cases_link(request, gate_run_id, query):
    """The URL of a page of the gate run's cases (``GET gate-runs/{id}/cases?...``)."""
    path = reverse("api-gate-run-cases", kwargs={"gate_run_id": gate_run_id})
    return request.build_absolute_uri(f"{path}?{urlencode(query)}")


def case_linked(case, runs):
    run_url = None if case.get("trace_id") is None else f"{runs}{quote(case['trace_id'], safe=_PATH_SAFE)}/"
    return {**case, "run_url": run_url}


GateRunAnswer = PolymorphicProxySerializer(
    component_name="GateRun",
    serializers=[GateVerdict, GateRunPending],
    resource_type_field_name=None,
    many=False,
)


class GateView(APIView):
    required_scopes = {"POST": GATE}

    @extend_schema(
        operation_id="gate",
        summary="Ask the gate for a verdict (PASS or FAIL) on an experiment's runs of a dataset",
        description="Scores whatever is missing for the experiment's runs of the dataset's active cases, then answers "
        "with the verdict (docs/gate.md). For a large dataset the answer is 202 with a gate run id to poll.",
        request=GateIn,
        responses={
            200: OpenApiResponse(GateVerdict, description="The verdict."),
            202: OpenApiResponse(GateAccepted, description="A worker is evaluating it; poll GET gate-runs/{id}."),
            **problem_responses(400, 401, 404, 429),
        },
    )
    def post(self, request):
        data = validated(GateIn, request.data)
        project = request_project(request)
        gate_run = gate_request(
            project=project, dataset_name=data["dataset"], experiment_name=data["experiment"],
            baseline_name=data.get("baseline"), set_baseline=data["set_baseline"], init_floor=data["init_floor"],
            key=request.auth,
        )  # fmt: skip
        answer = linked_answer(gate_run, request=request, project=project)
        if gate_run.status == GateRun.Status.RUNNING:
            return Response(answer, status=status.HTTP_202_ACCEPTED)
        return Response(answer)


class GateRunPagination(NewestFirstCursorPagination):
    ordering = ("-created_at", "-id")


class GateRunCollection(APIView):
    @extend_schema(
        operation_id="gate_runs_list",
        parameters=[
            OpenApiParameter("dataset", OpenApiTypes.STR),
            OpenApiParameter("experiment", OpenApiTypes.STR),
            OpenApiParameter("verdict", OpenApiTypes.STR, enum=["PASS", "FAIL"]),
            *PAGE_PARAMETERS,
        ],
        responses={
            200: paginated("PaginatedGateRunSummaryList", GateRunSummary),
            **problem_responses(400, 401),
        },
    )
    def get(self, request):
        q = request.query_params
        if q.get("verdict") not in (None, "PASS", "FAIL"):
            message = "must be PASS or FAIL"
            raise Invalid(f"verdict {message}.", errors=[{"field": "verdict", "message": message}])
        project = request_project(request)
        runs = gate_run_list(
            project=project,
            dataset=q.get("dataset"),
            experiment=q.get("experiment"),
            verdict=q.get("verdict"),
        )
        paginator = GateRunPagination()
        page = paginator.paginate_queryset(runs, request, view=self)
        return paginator.get_paginated_response(gate_run_summaries(page, request=request, project=project))


def gate_run_summaries(runs, *, request, project):
    """The list's answer about ``runs``."""
    return GateRunSummary(runs, many=True, context={"request": request, "project": project}).data


class GateRunDetail(APIView):
    @extend_schema(
        operation_id="gate_runs_retrieve",
        description="The verdict when the gate run is done (the same body as POST gate), else its status.",
        responses={200: GateRunAnswer, **problem_responses(401, 404)},
    )
    def get(self, request, gate_run_id):
        project = request_project(request)
        gate_run = gate_run_get(project=project, gate_run_id=gate_run_id)
        return Response(linked_answer(gate_run, request=request, project=project))


class GateCaseQuery(serializers.Serializer):
    order = serializers.ChoiceField(
        list(CASE_ORDERS), default="failures",
        help_text="failures: failing cases first (unmeasured first among them), then passing ones, each in "
        "report order (default); position: the report's order.",
    )  # fmt: skip
    passed = serializers.BooleanField(required=False, allow_null=True, default=None, help_text="Only these.")
    quarantined = serializers.BooleanField(
        required=False, allow_null=True, default=None,
        help_text="Only quarantined cases (true) or only gating ones (false); both by default.",
    )  # fmt: skip
    cursor = serializers.CharField(
        required=False, allow_blank=True,
        help_text="From the previous page's `next` (or the answer's `cases_next` / `quarantined_next`).",
    )  # fmt: skip
    page_size = serializers.IntegerField(
        required=False, min_value=1, max_value=500, help_text="Default: EVALSITE_GATE_ANSWER_CASES (100)."
    )


class GateRunCases(APIView):
    @extend_schema(
        operation_id="gate_runs_cases",
        summary="A gate run's case results, paged, failures first",
        description="The cases of a finished gate run, each as in the gate's answer, in pages that follow `next` "
        "(null on the last page). The gate's answer carries the first page and `cases_next` (docs/gate.md).",
        parameters=[GateCaseQuery],
        responses={200: GateCasePage, **problem_responses(400, 401, 404)},
    )
    def get(self, request, gate_run_id):
        query = validated(GateCaseQuery, request.query_params)
        project = request_project(request)
        gate_run = gate_run_get(project=project, gate_run_id=gate_run_id)
        results, following = case_page(
            gate_run=gate_run, order=query["order"], passed=query["passed"], quarantined=query["quarantined"],
            cursor=query.get("cursor"), size=query.get("page_size"),
        )  # fmt: skip
        runs = site_root(request) + reverse("runs", kwargs={"slug": project.slug})
        link = None
        if following:
            link = cases_link(request, gate_run.pk, {**request.query_params.dict(), "cursor": following})
        return Response({"next": link, "results": [case_linked(case, runs) for case in results]})
