"""OTLP/HTTP answers, in the content type of the request.

- Success: ``200`` with an ``ExportTraceServiceResponse`` (protobuf, or its JSON
  mapping). When spans were rejected, ``partialSuccess`` carries ``rejectedSpans`` and
  an ``errorMessage`` naming why; warnings that rejected nothing (an unknown case, say)
  come as an ``errorMessage`` with ``rejectedSpans`` 0, as the specification allows.
- Failure: the HTTP status with a ``google.rpc.Status`` body (``code``, ``message`` and,
  for a 400 with field errors, a ``google.rpc.BadRequest`` detail). ``Retry-After``
  accompanies 429 and 503, ``WWW-Authenticate`` accompanies 401.

A request whose Content-Type is neither protobuf nor JSON is answered in JSON.
``otlp_exception_handler`` is the OTLP endpoint's one translation of errors into HTTP,
as ``evalsite.errors.problem_exception_handler`` is for the rest of the API.
"""

import orjson
from django.core.exceptions import RequestDataTooBig
from django.http import HttpResponse
from google.protobuf import any_pb2, json_format
from google.rpc import code_pb2, error_details_pb2, status_pb2
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTracePartialSuccess,
    ExportTraceServiceResponse,
)
from rest_framework import exceptions as drf_exceptions

from datasets.otlp.decoding import PROTOBUF, body_format
from evalsite.errors import DomainError, PayloadTooLarge, database_unavailable

CONTENT_TYPES = {PROTOBUF: "application/x-protobuf", "json": "application/json"}
MAX_ERROR_MESSAGE = 4000
_SHOWN_PROBLEMS = 20
_GRPC_CODES = {
    400: code_pb2.INVALID_ARGUMENT,
    401: code_pb2.UNAUTHENTICATED,
    403: code_pb2.PERMISSION_DENIED,
    404: code_pb2.NOT_FOUND,
    405: code_pb2.UNIMPLEMENTED,
    413: code_pb2.RESOURCE_EXHAUSTED,
    415: code_pb2.INVALID_ARGUMENT,
    429: code_pb2.RESOURCE_EXHAUSTED,
    503: code_pb2.UNAVAILABLE,
}


def request_format(request):
    """``"protobuf"`` or ``"json"``: how to answer this request."""
    return body_format(request.META.get("CONTENT_TYPE")) or "json"


def error_message(problems):
    """One ``errorMessage`` from a list of problems: the first ones, then a count of the rest."""
    if not problems:
        return ""
    shown = problems[:_SHOWN_PROBLEMS]
    text = "; ".join(shown)
    if len(problems) > len(shown):
        text += f"; and {len(problems) - len(shown)} more"
    return text if len(text) <= MAX_ERROR_MESSAGE else text[: MAX_ERROR_MESSAGE - 1] + "…"


def export_response(*, rejected, problems, fmt):
    """``200`` with the ``ExportTraceServiceResponse`` for an export that was taken."""
    message = ExportTraceServiceResponse()
    text = error_message(problems)
    if rejected or text:
        message.partial_success.CopyFrom(ExportTracePartialSuccess(rejected_spans=rejected, error_message=text))
    return _response(message, fmt, status=200)


def status_response(*, status, message, fmt, errors=None, headers=None):
    """An error answer: ``status`` with a ``google.rpc.Status`` body."""
    body = status_pb2.Status(code=_GRPC_CODES.get(status, code_pb2.UNKNOWN), message=message)
    if errors:
        detail = any_pb2.Any()
        detail.Pack(
            error_details_pb2.BadRequest(
                field_violations=[
                    error_details_pb2.BadRequest.FieldViolation(
                        field=str(e.get("field") or ""), description=str(e.get("message") or "")
                    )
                    for e in errors
                ]
            )
        )
        body.details.append(detail)
    response = _response(body, fmt, status=status)
    for name, value in (headers or {}).items():
        response[name] = value
    return response


def _response(message, fmt, *, status):
    if fmt == PROTOBUF:
        content = message.SerializeToString()
    else:
        content = orjson.dumps(json_format.MessageToDict(message))
    return HttpResponse(content, status=status, content_type=CONTENT_TYPES[fmt])


def otlp_exception_handler(exc, context):
    """DRF exception handler of the OTLP view: every error as a ``google.rpc.Status``."""
    fmt = request_format(context["request"])
    exc = database_unavailable(exc) or exc
    if isinstance(exc, RequestDataTooBig):
        exc = PayloadTooLarge(str(exc))
    if isinstance(exc, DomainError):
        return status_response(status=exc.status, message=exc.detail, fmt=fmt, errors=exc.errors, headers=exc.headers)
    if isinstance(exc, drf_exceptions.APIException):
        headers = {}
        if getattr(exc, "auth_header", None):
            headers["WWW-Authenticate"] = exc.auth_header
        if getattr(exc, "wait", None):
            headers["Retry-After"] = str(int(exc.wait))
        detail = exc.detail if isinstance(exc.detail, str) else str(exc.detail)
        return status_response(status=exc.status_code, message=detail, fmt=fmt, headers=headers)
    return None
