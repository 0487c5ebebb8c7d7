"""HTTP API of end users' feedback: ``POST traces/{trace_id}/feedback``.

Made to be called from a web page with a ``feedback`` key: the rules are
``scoring.feedback``; docs/feedback.md is the reference. Safe in a browser:

- CORS: a preflight (``OPTIONS``, which carries no key) is answered for an origin some
  project lists in ``feedback_origins``; the POST is refused (403) unless the key's own
  project lists its ``Origin``. Requests without ``Origin`` (servers) and pages of this
  site itself are not affected.
- A rate limit per key and client address (``EVALSITE_FEEDBACK_PER_MINUTE``, counted in
  the database so every web process shares it), checked before anything else.
"""

from django.conf import settings
from django.http import HttpResponse
from django.utils.cache import patch_vary_headers
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from evalsite.addresses import client_address
from evalsite.auth import request_project
from evalsite.errors import Invalid, OriginNotAllowed, domain_error_response
from evalsite.models import ApiKey
from evalsite.origins import origin_allowed, origin_listed
from evalsite.rate_limits import rate_bucket, rate_take
from evalsite.scopes import FEEDBACK
from scoring.feedback import CATEGORY_MAX, COMMENT_MAX, NAME_MAX, USER_ID_MAX, feedback_clean, feedback_record
from web.api.openapi import problem_responses, request_component

TRACE_ID_MAX = 200

FEEDBACK_REQUEST = {
    "type": "object",
    "required": ["name", "value"],
    "additionalProperties": False,
    "properties": {
        "name": {
            "type": "string",
            "minLength": 1,
            "maxLength": NAME_MAX,
            "description": "What is rated (`thumbs`, `helpful`, `stars`): the score is `feedback:<name>`.",
        },
        "value": {
            "oneOf": [
                {"type": "boolean", "description": "true passes (value 1), false fails (value 0)."},
                {"type": "number", "description": "On 0..1 (stored clamped; passes from 0.5)."},
                {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": CATEGORY_MAX,
                    "description": "A category (`too_slow`): neither a pass nor a failure.",
                },
            ]
        },
        "comment": {"type": ["string", "null"], "maxLength": COMMENT_MAX},
        "user_id": {
            "type": ["string", "null"],
            "maxLength": USER_ID_MAX,
            "description": "Who gave it: one feedback per (run, name, user_id), the newest replaces the older.",
        },
    },
}

PREFLIGHT_MAX_AGE_SECONDS = 600

AcceptedOut = inline_serializer("FeedbackAccepted", {"accepted": serializers.BooleanField()})


class TraceFeedback(APIView):
    required_scopes = {"POST": FEEDBACK}

    def initial(self, request, *args, **kwargs):
        # A preflight carries no key: ``options`` answers it from its origin alone.
        if request.method != "OPTIONS":
            super().initial(request, *args, **kwargs)

    def options(self, request, trace_id):
        origin = request.headers.get("Origin", "")
        if request.headers.get("Access-Control-Request-Method") != "POST" or not origin_listed(origin):
            return domain_error_response(
                OriginNotAllowed(f"No project lets pages of {origin or 'this origin'!r} send feedback.")
            )
        response = HttpResponse(status=204)
        response["Access-Control-Allow-Methods"] = "POST"
        response["Access-Control-Allow-Headers"] = "Authorization, Content-Type"
        response["Access-Control-Max-Age"] = str(PREFLIGHT_MAX_AGE_SECONDS)
        return _cors_headers(response, origin)

    def finalize_response(self, request, response, *args, **kwargs):
        # Errors too (400, 429) carry the headers: the page's script can read why.
        response = super().finalize_response(request, response, *args, **kwargs)
        origin = request.headers.get("Origin", "")
        if origin and request.method == "POST":
            key = request.auth if isinstance(getattr(request, "_auth", None), ApiKey) else None
            if origin_allowed(key.project, origin) if key else origin_listed(origin):
                _cors_headers(response, origin)
        return response

    @extend_schema(
        operation_id="traces_feedback_create",
        summary="Send an end user's feedback on a run (from a web page)",
        description=(
            "Accepted (202) whether or not the run has arrived: feedback on a run not stored yet is kept and "
            "attached when the run is ingested (API or OTLP). Stored as a score `feedback:<name>` with source "
            "`feedback`, one per (run, name, user_id): the newest replaces the older, and the same feedback again "
            "changes nothing. New feedback counts one record against the project's quota (429 `quota-exceeded`). "
            "Each key and client address may send `EVALSITE_FEEDBACK_PER_MINUTE` (default 60) a minute (429 "
            "`rate-limited`, with `Retry-After`). From a browser the page's `Origin` must be one of the project's "
            "feedback origins (CORS; the preflight answers only listed origins), else 403 `origin-not-allowed`. "
            "Rules: docs/feedback.md."
        ),
        request=request_component("FeedbackInRequest", FEEDBACK_REQUEST),
        responses={
            202: OpenApiResponse(AcceptedOut, description="Recorded, or kept until the run arrives."),
            **problem_responses(400, 401, 403, 429),
        },
    )
    def post(self, request, trace_id):
        project = request_project(request)
        rate_take(
            bucket=rate_bucket("feedback", request.auth.pk, client_address(request) or "unknown"),
            limit=settings.EVALSITE_FEEDBACK_PER_MINUTE,
            what="feedback requests",
        )
        origin = request.headers.get("Origin")
        # A page of this site itself (the API docs' "try it out") is not a cross-origin caller.
        own = request.build_absolute_uri("/").rstrip("/")
        if origin and origin != own and not origin_allowed(project, origin):
            raise OriginNotAllowed(
                f"Pages of {origin!r} may not send this project's feedback: an admin lists the origin on the "
                "settings page (feedback origins)."
            )
        if len(trace_id) > TRACE_ID_MAX:
            message = f"must be at most {TRACE_ID_MAX} characters"
            raise Invalid(f"The trace_id {message}.", errors=[{"field": "trace_id", "message": message}])
        feedback_record(project=project, trace_id=trace_id, feedback=feedback_clean(request.data))
        return Response({"accepted": True}, status=status.HTTP_202_ACCEPTED)


def _cors_headers(response, origin):
    response["Access-Control-Allow-Origin"] = origin
    response["Access-Control-Expose-Headers"] = "Retry-After"
    patch_vary_headers(response, ("Origin",))
    return response
