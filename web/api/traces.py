"""HTTP API for runs: ingest, list, read."""

from django.conf import settings
from drf_spectacular.utils import (
    OpenApiResponse,
    extend_schema,
    extend_schema_field,
    extend_schema_serializer,
    inline_serializer,
)
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from datasets.ingestion import traces_ingest
from datasets.models import Span, Trace
from datasets.run_schema import request_schema
from datasets.run_selectors import spans_in_tree_order, trace_get
from evalsite.auth import request_project
from evalsite.scopes import INGEST
from scoring.feedback import feedback_attach
from scoring.models import Abstention, Score
from scoring.run_filters import ID_MAX, RUN_FILTERS, run_filters_from
from scoring.selectors import run_scores, runs_list
from web.api.openapi import PAGE_PARAMETERS, paginated, problem_responses
from web.api.rest import AnyJson, JsonObject, NewestFirstCursorPagination
from web.api.shapes import CostDetail, TokenUsage, shaped

_SPAN_USAGE = (
    "As the run sent it: token counts (input_tokens, output_tokens, ...; any object is taken). On a model call "
    "the server adds cost_source (reported, override, genai-prices) and priced_as, or unknown_price: true."
)


@extend_schema_serializer(component_name="Span")
class SpanOut(serializers.ModelSerializer):
    """One span of a run; a run's spans come in tree order (each parent before its children)."""

    parent_id = serializers.CharField(
        source="parent_span_id", allow_null=True, help_text="The parent span's span_id; null for a root."
    )
    depth = serializers.IntegerField(help_text="Depth in the span tree (0 for a root).")
    cost_cents = serializers.FloatField(allow_null=True)
    input = AnyJson(help_text="For a tool call: its arguments. Any JSON value; null when not sent.")
    output = AnyJson(help_text="For a tool call: its result. Any JSON value; null when not sent.")
    usage = JsonObject(allow_null=True, help_text=_SPAN_USAGE)
    attributes = JsonObject(help_text="The span's attributes as sent.")

    class Meta:
        model = Span
        fields = [
            "span_id", "parent_id", "depth", "kind", "name", "input", "output", "status", "error", "started_at",
            "ended_at", "latency_ms", "cost_cents", "model", "usage", "attributes",
        ]  # fmt: skip


class TraceOut(serializers.ModelSerializer):
    experiment = serializers.CharField(source="experiment.name", allow_null=True, default=None)
    case = serializers.IntegerField(source="case_id", allow_null=True)
    cost_cents = serializers.FloatField(allow_null=True)
    input = AnyJson(help_text="The run's input: text or any JSON value; null when not sent.")
    output = AnyJson(help_text="The run's answer: text or any JSON value; null when it gave none.")
    usage = shaped(JsonObject, TokenUsage, "TokenUsageField")(
        allow_null=True,
        help_text="Token totals of the run's model calls: input_tokens, output_tokens, cache_read_tokens, "
        "cache_write_tokens, total_tokens (OpenTelemetry runs).",
    )
    models = serializers.ListField(
        child=serializers.CharField(), source="models_used", allow_null=True, help_text="Models used, in order."
    )
    cost_detail = shaped(JsonObject, CostDetail, "CostDetailField")(
        allow_null=True,
        help_text='How cost_cents was found: {"estimated": bool, "sources": [...], "price_table"?}, or '
        '{"unknown_price": [models]} when it is empty because a model has no known price.',
    )
    metadata = JsonObject(help_text="The run's metadata as sent.")
    tags = shaped(serializers.JSONField, serializers.ListField(child=serializers.CharField()), "TagsField")()

    class Meta:
        model = Trace
        fields = [
            "trace_id", "name", "status", "error", "input", "output", "started_at", "ended_at", "latency_ms",
            "cost_cents", "usage", "models", "cost_detail", "session_id", "user_id", "conversation_id", "metadata",
            "tags", "experiment", "case", "trial", "source", "ingested_at",
        ]  # fmt: skip


class RunScoreOut(serializers.ModelSerializer):
    experiment = serializers.CharField(source="experiment.name", allow_null=True, default=None)
    source = serializers.CharField(help_text="builtin, judge, human or feedback.")
    stale = serializers.BooleanField(
        read_only=True, help_text="The run changed after this score was computed (a late span); a re-score replaces it."
    )
    config = serializers.JSONField(help_text="The config the scorer ran with.")

    class Meta:
        model = Score
        fields = [
            "scorer", "scorer_version", "value", "passed", "reason", "detail", "config", "source", "experiment",
            "stale", "created_at",
        ]  # fmt: skip


class RunAbstentionOut(serializers.ModelSerializer):
    experiment = serializers.CharField(source="experiment.name", allow_null=True, default=None)

    class Meta:
        model = Abstention
        fields = ["scorer", "scorer_version", "kind", "reason", "detail", "experiment", "created_at", "reviewed_at"]


class TraceDetailOut(TraceOut):
    spans = serializers.SerializerMethodField()
    scores = RunScoreOut(source="scores_list", many=True, read_only=True, help_text="The run's scores, by scorer.")
    abstentions = RunAbstentionOut(
        source="abstentions_list",
        many=True,
        read_only=True,
        help_text="Scorers that could not answer for this run, and why (newest first).",
    )

    class Meta(TraceOut.Meta):
        fields = TraceOut.Meta.fields + ["spans", "scores", "abstentions"]

    @extend_schema_field(SpanOut(many=True, help_text="The run's spans in tree order: a parent before its children."))
    def get_spans(self, trace):
        return SpanOut(spans_in_tree_order(trace), many=True).data

    def to_representation(self, trace):
        # Read once here, so each list costs one query however many scores it holds.
        trace.scores_list, trace.abstentions_list = run_scores(trace)
        return super().to_representation(trace)


def _filter_field(f):
    common = {"required": False}
    if f.help:
        common["help_text"] = f.help
    if f.kind in ("text", "scorer"):
        return serializers.CharField(max_length=f.max_length, **common)
    if f.kind == "id":
        return serializers.IntegerField(min_value=1, max_value=ID_MAX, **common)
    if f.kind == "status":
        return serializers.ChoiceField(choices=list(f.choices), **common)
    if f.kind == "time":
        return serializers.DateTimeField(**common)
    raise ValueError(f"unknown run filter kind {f.kind!r}")


# The query parameters of GET traces, built from the one declaration of the runs list's
# filters (scoring.run_filters); "from" is a Python keyword, so no class body could name it.
TraceFilters = type("TraceFilters", (serializers.Serializer,), {f.api: _filter_field(f) for f in RUN_FILTERS})


class TracePagination(NewestFirstCursorPagination):
    ordering = ("-started_at", "-id")


IngestOut = inline_serializer(
    "IngestResult",
    {
        "created": serializers.IntegerField(help_text="Runs written by this request."),
        "unchanged": serializers.IntegerField(help_text="Runs already stored with identical content."),
        "traces": inline_serializer(
            "IngestedTrace",
            {"trace_id": serializers.CharField(), "status": serializers.ChoiceField(["created", "unchanged"])},
            many=True,
        ),
    },
)


class TraceCollection(APIView):
    required_scopes = {"POST": INGEST}

    @extend_schema(
        operation_id="traces_ingest",
        summary="Ingest one run, or a batch of runs",
        description=(
            'One run, or `{"traces": [...]}` (at most `EVALSITE_MAX_BATCH` runs, default 1000). The batch is '
            "validated whole: any bad item is a 400 whose `errors` name each item by index and field, and nothing "
            "is written. Re-sending a `trace_id` with identical content is a no-op; different content is a 409. "
            "Each new run counts one against the project's `quota_per_minute` (429 with `Retry-After`). Bodies over "
            "`EVALSITE_MAX_BODY_BYTES` (default 16 MiB) get a 413."
        ),
        request={"application/json": request_schema(settings.EVALSITE_MAX_BATCH)},
        responses={
            201: OpenApiResponse(IngestOut, description="Something new was written."),
            200: OpenApiResponse(IngestOut, description="Every run was already stored with identical content."),
            **problem_responses(400, 401, 409, 413, 429),
        },
    )
    def post(self, request):
        project = request_project(request)
        result = traces_ingest(project=project, payload=request.data)
        # Committed: feedback that arrived before these runs becomes their scores.
        feedback_attach(project=project, trace_ids=result.created)
        return Response(result.as_dict(), status=status.HTTP_201_CREATED if result.created else status.HTTP_200_OK)

    @extend_schema(
        operation_id="traces_list",
        summary="List runs, newest first",
        parameters=[TraceFilters, *PAGE_PARAMETERS],
        responses={200: paginated("PaginatedTraceList", TraceOut), **problem_responses(400, 401)},
    )
    def get(self, request):
        # A plain dict: from a QueryDict, DRF would read an empty "to=" as "not given".
        filters = TraceFilters(data=request.query_params.dict())
        filters.is_valid(raise_exception=True)
        f = filters.validated_data
        traces = runs_list(project=request_project(request), **run_filters_from(f))
        paginator = TracePagination()
        page = paginator.paginate_queryset(traces, request, view=self)
        return paginator.get_paginated_response(TraceOut(page, many=True).data)


class TraceDetail(APIView):
    @extend_schema(
        operation_id="traces_retrieve",
        summary="One run with its spans in tree order, its scores and abstentions",
        responses={200: TraceDetailOut, **problem_responses(401, 404)},
    )
    def get(self, request, trace_id):
        trace = trace_get(project=request_project(request), trace_id=trace_id)
        return Response(TraceDetailOut(trace).data)
