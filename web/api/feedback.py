"""HTTP API of end users' feedback: ``POST traces/{trace_id}/feedback``.

Made to be called from a web page with a ``feedback`` key: the rules are
``scoring.feedback``; docs/feedback.md is the reference.
"""

from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from evalsite.auth import request_project
from evalsite.errors import Invalid
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

AcceptedOut = inline_serializer("FeedbackAccepted", {"accepted": serializers.BooleanField()})


class TraceFeedback(APIView):
    required_scopes = {"POST": FEEDBACK}

    @extend_schema(
        operation_id="traces_feedback_create",
        summary="Send an end user's feedback on a run (from a web page)",
        description=(
            "Accepted (202) whether or not the run has arrived: feedback on a run not stored yet is kept and "
            "attached when the run is ingested (API or OTLP). Stored as a score `feedback:<name>` with source "
            "`feedback`, one per (run, name, user_id): the newest replaces the older, and the same feedback again "
            "changes nothing. New feedback counts one record against the project's quota (429). Rules: "
            "docs/feedback.md."
        ),
        request=request_component("FeedbackInRequest", FEEDBACK_REQUEST),
        responses={
            202: OpenApiResponse(AcceptedOut, description="Recorded, or kept until the run arrives."),
            **problem_responses(400, 401, 429),
        },
    )
    def post(self, request, trace_id):
        project = request_project(request)
        if len(trace_id) > TRACE_ID_MAX:
            message = f"must be at most {TRACE_ID_MAX} characters"
            raise Invalid(f"The trace_id {message}.", errors=[{"field": "trace_id", "message": message}])
        feedback_record(project=project, trace_id=trace_id, feedback=feedback_clean(request.data))
        return Response({"accepted": True}, status=status.HTTP_202_ACCEPTED)
