"""HTTP API of team review: queues with their assignees, reviewers per item and blind mode; agreement; adjudication.

``queues`` (GET, POST), ``queues/{id}`` (GET, PATCH the team fields),
``queues/{id}/agreement`` (the reviewers' agreement per label config), and
``queues/{id}/adjudications`` (GET the disagreements, POST a decision: the run's reference
label). Writing needs ``curate``. The rules are ``scoring.review.assignment`` and
``scoring.review.adjudication``; docs/labels.md is the reference.
"""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from datasets.run_selectors import trace_get
from evalsite.auth import request_project
from evalsite.scopes import CURATE
from scoring.labels import label_config_get
from scoring.models import QueueFilter
from scoring.review.adjudication import adjudicate, queue_disagreements, reference_label, reviewer_agreements
from scoring.review.assignment import (
    REVIEWERS_MAX,
    queue_assignee_names,
    queue_team_clean,
    queue_team_create,
    queue_team_set,
)
from scoring.review.queue import queue_filter_get, queue_filter_list, queue_progress
from web.api.openapi import PAGE_PARAMETERS, paginated, problem_responses
from web.api.rest import NewestFirstCursorPagination, Text, validated


class StrictBoolean(serializers.BooleanField):
    """A JSON ``true`` or ``false`` only: DRF would read ``0``, ``"yes"`` or ``"on"`` as one."""

    def to_internal_value(self, data):
        if not isinstance(data, bool):
            self.fail("invalid", input=data)
        return data


class StrictInteger(serializers.IntegerField):
    """A JSON whole number only: DRF would read ``"3"``, ``3.0`` or ``true`` as one."""

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return super().to_internal_value(data)


class QueueTeamIn(serializers.Serializer):
    assignees = serializers.ListField(
        child=Text(max_length=150), required=False, max_length=200,
        help_text="Usernames of the project's reviewers or admins who may take items; empty: every reviewer.",
    )  # fmt: skip
    reviewers_per_item = StrictInteger(
        required=False, min_value=1, max_value=REVIEWERS_MAX, help_text="Labels each item needs before it is done."
    )
    blind = StrictBoolean(required=False, help_text="Reviewers do not see each other's labels.")


class QueueIn(QueueTeamIn):
    name = Text(max_length=100)
    kind = serializers.ChoiceField(choices=QueueFilter.Kind.values, required=False, default=QueueFilter.Kind.RUNS)
    dataset = Text(max_length=200, required=False, allow_blank=True, default="")
    experiment = Text(max_length=200, required=False, allow_blank=True, default="")
    failed_scorer = Text(max_length=100, required=False, allow_blank=True, default="")
    abstained_scorer = Text(max_length=100, required=False, allow_blank=True, default="")
    unlabeled = Text(max_length=100, required=False, allow_blank=True, default="", help_text="A label config's name.")
    disagreement = Text(max_length=100, required=False, allow_blank=True, default="", help_text="A judge criterion.")
    feedback = Text(max_length=300, required=False, allow_blank=True, default="", help_text="name:value")


class QueueProgressOut(serializers.Serializer):
    done = serializers.IntegerField()
    total = serializers.IntegerField()


class QueueOut(serializers.Serializer):
    id = serializers.IntegerField(source="pk")
    name = serializers.CharField()
    kind = serializers.CharField()
    assignees = serializers.SerializerMethodField()
    reviewers_per_item = serializers.IntegerField()
    blind = serializers.BooleanField()
    progress = serializers.SerializerMethodField()
    created_at = serializers.DateTimeField()

    def get_assignees(self, queue) -> list[str]:
        return queue_assignee_names(queue)

    @extend_schema_field(QueueProgressOut)
    def get_progress(self, queue):
        progress = queue_progress(queue)
        return {"done": progress.done, "total": progress.total}


class AgreementOut(serializers.Serializer):
    config = serializers.CharField()
    kind = serializers.CharField()
    method = serializers.CharField(help_text="kappa (two reviewers), alpha-nominal or alpha-interval (more, numbers).")
    value = serializers.FloatField(allow_null=True, help_text="Null when undefined (nothing compared, all the same).")
    items = serializers.IntegerField(help_text="Items labelled by at least two reviewers.")
    reviewers = serializers.IntegerField()


class QueueAgreementOut(serializers.Serializer):
    queue = serializers.IntegerField()
    labels = AgreementOut(many=True)


class ReviewerLabelOut(serializers.Serializer):
    author = serializers.CharField()
    label = serializers.JSONField()
    comment = serializers.CharField()


class DisagreementOut(serializers.Serializer):
    trace_id = serializers.CharField(source="trace.trace_id")
    config = serializers.CharField(source="config.name")
    labels = ReviewerLabelOut(many=True)


class DisagreementsOut(serializers.Serializer):
    results = DisagreementOut(many=True)


class AdjudicationIn(serializers.Serializer):
    trace_id = Text(max_length=200)
    config = Text(max_length=100, help_text="The label config's name.")
    value = serializers.JSONField(help_text="The decision: true/false, a category, or a number, by the config's kind.")
    comment = Text(required=False, allow_blank=True, default="", max_length=2000)


class ReferenceLabelOut(serializers.Serializer):
    trace_id = serializers.CharField(source="trace.trace_id")
    config = serializers.SerializerMethodField()
    value = serializers.SerializerMethodField()
    passed = serializers.BooleanField()
    comment = serializers.CharField(source="reason")
    decided_by = serializers.SerializerMethodField()
    reviewers = serializers.SerializerMethodField()

    def get_config(self, score) -> str:
        return score.scorer.split(":", 1)[1]

    @extend_schema_field(OpenApiTypes.ANY)
    def get_value(self, score):
        return score.detail.get("label")

    def get_decided_by(self, score) -> str:
        return score.detail.get("decided_by", "")

    @extend_schema_field(ReviewerLabelOut(many=True))
    def get_reviewers(self, score):
        return [{"comment": "", **r} for r in score.detail.get("reviewers", [])]


class QueuePagination(NewestFirstCursorPagination):
    ordering = ("name", "id")


def _queue(request, queue_id):
    return queue_filter_get(project=request_project(request), queue_id=queue_id)


class QueueCollection(APIView):
    required_scopes = {"POST": CURATE}

    @extend_schema(
        operation_id="queues_list",
        summary="The project's annotation queues, by name, with their team settings and progress",
        parameters=PAGE_PARAMETERS,
        responses={200: paginated("PaginatedQueueList", QueueOut), **problem_responses(400, 401)},
    )
    def get(self, request):
        paginator = QueuePagination()
        page = paginator.paginate_queryset(queue_filter_list(project=request_project(request)), request, view=self)
        return paginator.get_paginated_response(QueueOut(page, many=True).data)

    @extend_schema(
        operation_id="queues_create",
        summary="Save a queue: its filter, its assignees, reviewers per item and blind mode",
        request=QueueIn,
        responses={201: QueueOut, **problem_responses(400, 401, 403)},
    )
    def post(self, request):
        data = validated(QueueIn, request.data)
        queue = queue_team_create(project=request_project(request), data=dict(data), by=None)
        return Response(QueueOut(queue).data, status=status.HTTP_201_CREATED)


class QueueDetail(APIView):
    required_scopes = {"PATCH": CURATE}

    @extend_schema(operation_id="queues_retrieve", responses={200: QueueOut, **problem_responses(401, 404)})
    def get(self, request, queue_id):
        return Response(QueueOut(_queue(request, queue_id)).data)

    @extend_schema(
        operation_id="queues_update",
        summary="Change a queue's assignees, reviewers per item or blind mode",
        request=QueueTeamIn,
        responses={200: QueueOut, **problem_responses(400, 401, 403, 404)},
    )
    def patch(self, request, queue_id):
        queue = _queue(request, queue_id)
        data = validated(QueueTeamIn, request.data)
        fields = queue_team_clean(project=queue.project, data=dict(data))
        return Response(QueueOut(queue_team_set(queue=queue, fields=fields)).data)


class QueueAgreement(APIView):
    @extend_schema(
        operation_id="queues_agreement",
        summary="How much the queue's reviewers agree, per label config",
        description="Cohen's kappa when exactly two reviewers labelled the items compared; Krippendorff's alpha "
        "for more (nominal for boolean and categorical labels, interval for numeric ones).",
        responses={200: QueueAgreementOut, **problem_responses(401, 404)},
    )
    def get(self, request, queue_id):
        queue = _queue(request, queue_id)
        labels = [a.as_dict() for a in reviewer_agreements(project=queue.project, queue=queue)]
        return Response(QueueAgreementOut({"queue": queue.pk, "labels": labels}).data)


class QueueAdjudications(APIView):
    required_scopes = {"POST": CURATE}

    @extend_schema(
        operation_id="queues_adjudications_list",
        summary="The queue's disagreements still to decide: items whose reviewers gave different labels",
        responses={200: DisagreementsOut, **problem_responses(401, 404)},
    )
    def get(self, request, queue_id):
        return Response(DisagreementsOut({"results": queue_disagreements(queue=_queue(request, queue_id))}).data)

    @extend_schema(
        operation_id="queues_adjudications_create",
        summary="Decide an item: the decision becomes the run's reference label of the config",
        description="Recorded with the API key's name as who decided. A second decision replaces the first.",
        request=AdjudicationIn,
        responses={
            201: OpenApiResponse(ReferenceLabelOut, description="The run's first reference label of the config."),
            200: OpenApiResponse(ReferenceLabelOut, description="The reference label, decided again."),
            **problem_responses(400, 401, 403, 404, 429),
        },
    )
    def post(self, request, queue_id):
        queue = _queue(request, queue_id)
        data = validated(AdjudicationIn, request.data)
        trace = trace_get(project=queue.project, trace_id=data["trace_id"])
        config = label_config_get(project=queue.project, name=data["config"])
        existed = reference_label(trace, config) is not None
        key = request.auth
        score = adjudicate(
            queue=queue, trace=trace, config=config, value=data["value"], comment=data["comment"],
            decided_by={"name": key.name or key.prefix, "by": "key"},
        )  # fmt: skip
        return Response(
            ReferenceLabelOut(score).data, status=status.HTTP_200_OK if existed else status.HTTP_201_CREATED
        )
