"""HTTP API of monitors: create, read, change (pause, resume, target, window...) and their alerts.

Writes need the ``curate`` scope; reads any. The fields' rules are one rulebook
(``monitors.monitor_rules``): a bad field is a 400 naming it. The signing secret is
returned to keys with ``curate`` only, to verify webhook deliveries.
"""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from evalsite.auth import request_project
from evalsite.scopes import CURATE, key_has_scope
from monitors.models import Direction, Metric, MonitorState
from monitors.monitor_rules import MAX_RECIPIENTS, MAX_WEBHOOKS, MAX_WINDOW_MINUTES
from monitors.selectors import alert_list, monitor_get, monitor_list
from monitors.services import monitor_create, monitor_update
from web.api.openapi import PAGE_PARAMETERS, paginated, problem_responses
from web.api.rest import NewestFirstCursorPagination
from web.api.shapes import MonitorFilter, shaped

# The body's values are read raw (JSONField) so ``monitor_rules`` names each bad one;
# the schema still says what each takes.
_Filter = shaped(serializers.JSONField, MonitorFilter, "MonitorFilterField")
_Minutes = shaped(serializers.JSONField, {"type": "integer", "minimum": 1, "maximum": MAX_WINDOW_MINUTES}, "Minutes")
_Target = shaped(serializers.JSONField, {"type": "number", "minimum": 0}, "Target")
_MinRuns = shaped(serializers.JSONField, {"type": "integer", "minimum": 1, "maximum": 1_000_000}, "MinRuns")
_Urls = shaped(serializers.JSONField, {"type": "array", "maxItems": MAX_WEBHOOKS, "items": {"type": "string"}}, "Urls")
_Emails = shaped(
    serializers.JSONField, {"type": "array", "maxItems": MAX_RECIPIENTS, "items": {"type": "string"}}, "Emails"
)


class MonitorIn(serializers.Serializer):
    """The schema of the body; the rules are checked by ``monitors.monitor_rules``, naming each bad field."""

    name = serializers.CharField(required=False, help_text="Unique in the project.")
    metric = serializers.ChoiceField(Metric.choices, required=False)
    scorer = serializers.CharField(required=False, allow_blank=True, help_text="The scorer of a pass_rate.")
    feedback_name = serializers.CharField(
        required=False, allow_blank=True, help_text="A feedback metric's name: scorer feedback:<name>."
    )
    filter = _Filter(required=False, help_text="Runs kept: {name: text, tags: [all present]}.")
    production_only = serializers.BooleanField(required=False, help_text="Runs of no experiment only (default true).")
    window_minutes = _Minutes(required=False, help_text="1 to 10080 (default 60).")
    target = _Target(required=False, help_text="A rate 0..1, or a p95 in ms or cents.")
    direction = serializers.ChoiceField(
        Direction.choices, required=False, help_text="Default: above for pass_rate and feedback, below for the rest."
    )
    min_runs = _MinRuns(required=False, help_text="Runs the window needs to decide (default 30).")
    paused = serializers.BooleanField(required=False)
    webhook_urls = _Urls(required=False, help_text="Up to 10 http(s) URLs each alert is POSTed to.")
    email_recipients = _Emails(
        required=False,
        help_text="Up to 10 e-mail addresses each alert is sent to (400 while the server has no EMAIL_HOST).",
    )


class MonitorOut(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    metric = serializers.ChoiceField(Metric.choices)
    scorer = serializers.CharField(allow_blank=True)
    feedback_name = serializers.CharField(allow_blank=True)
    filter = shaped(serializers.DictField, MonitorFilter, "MonitorFilterOut")()
    production_only = serializers.BooleanField()
    window_minutes = serializers.IntegerField()
    target = serializers.FloatField()
    direction = serializers.ChoiceField(Direction.choices)
    min_runs = serializers.IntegerField()
    paused = serializers.BooleanField()
    state = serializers.ChoiceField(MonitorState.choices)
    last_evaluated_at = serializers.DateTimeField(allow_null=True)
    last_n = serializers.IntegerField()
    last_value = serializers.FloatField(allow_null=True)
    last_low = serializers.FloatField(allow_null=True)
    last_high = serializers.FloatField(allow_null=True)
    webhook_urls = serializers.ListField(child=serializers.CharField())
    email_recipients = serializers.ListField(child=serializers.CharField())
    secret = serializers.CharField(required=False, help_text="Only to keys with curate: signs webhook bodies.")
    created_at = serializers.DateTimeField()


class AlertOut(serializers.Serializer):
    id = serializers.IntegerField()
    kind = serializers.ChoiceField(["fired", "resolved"])
    at = serializers.DateTimeField()
    window_start = serializers.DateTimeField()
    window_end = serializers.DateTimeField()
    n = serializers.IntegerField()
    value = serializers.FloatField(allow_null=True)
    low = serializers.FloatField(allow_null=True)
    high = serializers.FloatField(allow_null=True)
    run_ids = serializers.ListField(child=serializers.IntegerField(), help_text="Trace pks of the failing runs.")
    text = serializers.CharField()


_OUT = [f for f in MonitorOut().fields if f != "secret"]


def monitor_out(monitor, request):
    out = {field: getattr(monitor, field) for field in _OUT}
    if request.auth is not None and key_has_scope(request.auth, CURATE):
        out["secret"] = monitor.secret
    return out


def alert_out(alert):
    return {field: getattr(alert, field) for field in AlertOut().fields}


class MonitorPagination(NewestFirstCursorPagination):
    ordering = ("-created_at", "-id")


class AlertPagination(NewestFirstCursorPagination):
    ordering = ("-at", "-id")


class MonitorCollection(APIView):
    required_scopes = {"POST": CURATE}

    @extend_schema(
        operation_id="monitors_create",
        summary="Create a monitor of production runs (docs/monitors.md)",
        request=MonitorIn,
        responses={201: MonitorOut, **problem_responses(400, 401, 403)},
    )
    def post(self, request):
        monitor = monitor_create(project=request_project(request), data=request.data)
        return Response(monitor_out(monitor, request), status=status.HTTP_201_CREATED)

    @extend_schema(
        operation_id="monitors_list",
        parameters=PAGE_PARAMETERS,
        responses={200: paginated("MonitorPage", MonitorOut), **problem_responses(401)},
    )
    def get(self, request):
        paginator = MonitorPagination()
        page = paginator.paginate_queryset(monitor_list(project=request_project(request)), request, view=self)
        return paginator.get_paginated_response([monitor_out(m, request) for m in page])


class MonitorDetail(APIView):
    required_scopes = {"PATCH": CURATE}

    @extend_schema(operation_id="monitors_retrieve", responses={200: MonitorOut, **problem_responses(401, 404)})
    def get(self, request, monitor_id):
        return Response(monitor_out(monitor_get(project=request_project(request), monitor_id=monitor_id), request))

    @extend_schema(
        operation_id="monitors_update",
        summary="Change a monitor: pause or resume, target, window, filter, webhooks...",
        request=MonitorIn,
        responses={200: MonitorOut, **problem_responses(400, 401, 403, 404)},
    )
    def patch(self, request, monitor_id):
        monitor = monitor_get(project=request_project(request), monitor_id=monitor_id)
        return Response(monitor_out(monitor_update(monitor=monitor, data=request.data), request))


class MonitorAlerts(APIView):
    @extend_schema(
        operation_id="monitors_alerts",
        summary="A monitor's alerts, newest first",
        parameters=PAGE_PARAMETERS,
        responses={200: paginated("AlertPage", AlertOut), **problem_responses(401, 404)},
    )
    def get(self, request, monitor_id):
        monitor = monitor_get(project=request_project(request), monitor_id=monitor_id)
        paginator = AlertPagination()
        page = paginator.paginate_queryset(alert_list(monitor=monitor), request, view=self)
        return paginator.get_paginated_response([alert_out(a) for a in page])
