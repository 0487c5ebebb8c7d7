"""HTTP API of online rules: which arriving runs to score, with what, and what each rule did."""

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from evalsite.auth import request_project
from evalsite.scopes import CURATE
from online.rules import rule_backfill_request, rule_counts, rule_create, rule_get, rule_list, rule_update
from web.api.openapi import PAGE_PARAMETERS, paginated, problem_responses
from web.api.rest import NewestFirstCursorPagination, validated
from web.api.scoring import SCORER_LIMIT, ScorerEntryField
from web.api.shapes import shaped


class RuleFilter(serializers.Serializer):
    name = serializers.CharField(required=False, help_text="The run's name.")
    experiment = serializers.CharField(required=False, help_text='An experiment, or "none" for production runs.')
    session = serializers.CharField(required=False)
    user = serializers.CharField(required=False)
    tags = serializers.ListField(child=serializers.CharField(), required=False, help_text="All of them present.")
    metadata = serializers.DictField(required=False, help_text="Each key equal.")


class RuleIn(serializers.Serializer):
    name = serializers.CharField(required=False)
    scorers = serializers.ListField(
        child=ScorerEntryField(),
        min_length=1,
        max_length=SCORER_LIMIT,
        required=False,
        help_text="As in POST /v1/api/passes (judge criteria included).",
    )
    config = serializers.DictField(child=serializers.DictField(), required=False)
    filter = shaped(serializers.JSONField, RuleFilter, "RuleFilterField")(
        required=False, help_text="The runs list's filters."
    )
    sample_rate = shaped(serializers.JSONField, {"type": "number", "minimum": 0, "maximum": 1}, "SampleRate")(
        required=False, help_text="0 to 1, deterministic per trace id."
    )
    paused = serializers.BooleanField(required=False)


RuleCounts = inline_serializer(
    "OnlineRuleCounts",
    {
        "matched": serializers.IntegerField(),
        "sampled": serializers.IntegerField(),
        "scored": serializers.IntegerField(help_text="Scores written by the rule's passes."),
        "skipped": serializers.IntegerField(),
        "skipped_reasons": serializers.DictField(child=serializers.IntegerField()),
        "passes": serializers.IntegerField(),
    },
)


class RuleOut(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    filter = RuleFilter()
    sample_rate = serializers.FloatField()
    scorers = serializers.ListField(child=ScorerEntryField())
    config = serializers.DictField()
    paused = serializers.BooleanField()
    last_error = serializers.CharField(allow_blank=True)
    created_at = serializers.DateTimeField()
    counts = RuleCounts


def rule_out(rule):
    return {
        **{f: getattr(rule, f) for f in ("id", "name", "filter", "sample_rate", "scorers", "config", "paused")},
        "last_error": rule.last_error,
        "created_at": rule.created_at,
        "counts": rule_counts(rule),
    }


class RulePagination(NewestFirstCursorPagination):
    ordering = ("-created_at", "-id")


class OnlineRuleCollection(APIView):
    required_scopes = {"POST": CURATE}

    @extend_schema(
        operation_id="online_rules_create",
        summary="Create an online rule: score arriving runs that match, sampled",
        description="Runs that arrive after the rule is made (API, OTLP traces and logs) and match its filter are "
        "scored by workers within seconds, a deterministic `sample_rate` of them; older runs with POST "
        ".../backfill. Bad input: 400 naming the field (`filter.tags`, `sample_rate`, `scorers[0]`, ...).",
        request=RuleIn,
        responses={201: RuleOut, **problem_responses(400, 401, 403)},
    )
    def post(self, request):
        data = validated(RuleIn, request.data)
        rule = rule_create(project=request_project(request), data=data)
        return Response(rule_out(rule), status=status.HTTP_201_CREATED)

    @extend_schema(
        operation_id="online_rules_list",
        parameters=PAGE_PARAMETERS,
        responses={200: paginated("OnlineRulePage", RuleOut), **problem_responses(401)},
    )
    def get(self, request):
        paginator = RulePagination()
        page = paginator.paginate_queryset(rule_list(project=request_project(request)), request, view=self)
        return paginator.get_paginated_response([rule_out(r) for r in page])


class OnlineRuleDetail(APIView):
    required_scopes = {"PATCH": CURATE}

    @extend_schema(operation_id="online_rules_retrieve", responses={200: RuleOut, **problem_responses(401, 404)})
    def get(self, request, rule_id):
        return Response(rule_out(rule_get(project=request_project(request), rule_id=rule_id)))

    @extend_schema(
        operation_id="online_rules_update",
        summary="Change, pause or resume an online rule",
        request=RuleIn,
        responses={200: RuleOut, **problem_responses(400, 401, 403, 404)},
    )
    def patch(self, request, rule_id):
        rule = rule_get(project=request_project(request), rule_id=rule_id)
        return Response(rule_out(rule_update(rule=rule, data=validated(RuleIn, request.data))))


class BackfillIn(serializers.Serializer):
    to = serializers.DateTimeField(help_text="Runs started before this time.")

    def get_fields(self):
        # "from" is a Python keyword, so it cannot be declared above; the contract names it so.
        fields = super().get_fields()
        fields["from"] = serializers.DateTimeField(help_text="Runs started at or after this time.")
        return fields

    def validate(self, attrs):
        if attrs["from"] >= attrs["to"]:
            raise serializers.ValidationError({"to": ["must be after from"]})
        return attrs


class OnlineRuleBackfill(APIView):
    required_scopes = {"POST": CURATE}

    @extend_schema(
        operation_id="online_rules_backfill",
        summary="Score a rule's matches among runs started in a time range",
        description="A worker samples and scores them like arriving runs; a run the rule already saw is not "
        "scored again. Answers 202; follow the rule's counts.",
        request=BackfillIn,
        responses={202: RuleOut, **problem_responses(400, 401, 403, 404)},
    )
    def post(self, request, rule_id):
        rule = rule_get(project=request_project(request), rule_id=rule_id)
        data = validated(BackfillIn, request.data)
        rule_backfill_request(rule=rule, started_from=data["from"], started_to=data["to"])
        return Response(rule_out(rule), status=status.HTTP_202_ACCEPTED)
