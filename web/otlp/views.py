"""``POST /v1/traces`` and ``POST /v1/logs``: the OTLP/HTTP traces and logs endpoints.

``OTEL_EXPORTER_OTLP_ENDPOINT`` pointed at the site reaches both; the logs carry the
message content that some GenAI instrumentations send as log records.

Authenticated by the project's key (``Authorization: Bearer esk_...``); CSRF does not
apply (no session). Answers in the request's own content type (see ``protocol``).
"""

from django.conf import settings
from drf_spectacular.utils import extend_schema
from rest_framework.views import APIView

from datasets.otlp.decoding import request_decode
from datasets.otlp.ingestion import otlp_spans_ingest
from datasets.otlp.log_decoding import logs_request_decode
from datasets.otlp.log_ingestion import otlp_logs_ingest
from evalsite.auth import request_project
from evalsite.errors import PayloadTooLarge
from evalsite.middleware import CHUNKED_META
from evalsite.scopes import INGEST
from scoring.feedback import feedback_attach
from web.otlp.overload import export_slot
from web.otlp.protocol import export_response, logs_export_response, otlp_exception_handler, request_format
from web.otlp.schema import EXPORT_REQUEST_SCHEMA, LOGS_REQUEST_SCHEMA, export_responses, logs_export_responses


class TraceExport(APIView):
    required_scopes = {"POST": INGEST}

    def get_exception_handler(self):
        return otlp_exception_handler

    def perform_content_negotiation(self, request, force=False):
        # The answer's format follows the request's Content-Type, not Accept.
        return super().perform_content_negotiation(request, force=True)

    @extend_schema(
        operation_id="otlp_traces_export",
        summary="Export OpenTelemetry spans (OTLP/HTTP)",
        description=(
            "The OTLP/HTTP traces endpoint: point `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` here. The body is an "
            "`ExportTraceServiceRequest` as protobuf (`application/x-protobuf`) or JSON (`application/json`), "
            "optionally gzip- or deflate-compressed (`Content-Encoding`). Spans become runs: one run per trace id, "
            "whose fields are recomputed as its spans arrive, in any order and over any number of exports. Spans "
            "that cannot be used are counted in `partialSuccess.rejectedSpans` with the reasons in `errorMessage`; "
            "the rest are written. The answer has the request's content type. Mapping rules: docs/otel.md."
        ),
        tags=["otlp"],
        request={
            "application/json": EXPORT_REQUEST_SCHEMA,
            "application/x-protobuf": {"type": "string", "format": "binary"},
        },
        responses=export_responses(),
    )
    def post(self, request):
        return _export(request, request_decode, _spans_ingest, "spans", export_response)


class LogExport(TraceExport):
    @extend_schema(
        operation_id="otlp_logs_export",
        summary="Export OpenTelemetry log records (OTLP/HTTP)",
        description=(
            "The OTLP/HTTP logs endpoint: point `OTEL_EXPORTER_OTLP_LOGS_ENDPOINT` here (or "
            "`OTEL_EXPORTER_OTLP_ENDPOINT` at the site). The body is an `ExportLogsServiceRequest` as protobuf or "
            "JSON, optionally gzip- or deflate-compressed. Records carrying GenAI content events "
            "(`gen_ai.user.message`, `gen_ai.choice`, `gen_ai.client.inference.operation.details`...) with the "
            "trace and span id of their span are kept and joined to that span, whether it arrived before or "
            "arrives after; other records are counted in `partialSuccess.rejectedLogRecords`. Rules: docs/otel.md."
        ),
        tags=["otlp"],
        request={
            "application/json": LOGS_REQUEST_SCHEMA,
            "application/x-protobuf": {"type": "string", "format": "binary"},
        },
        responses=logs_export_responses(),
    )
    def post(self, request):
        return _export(request, logs_request_decode, otlp_logs_ingest, "logs", logs_export_response)


def _spans_ingest(*, project, spans):
    outcome = otlp_spans_ingest(project=project, spans=spans)
    # Committed: feedback that arrived before these runs becomes their scores.
    feedback_attach(project=project, trace_ids=outcome.created)
    return outcome


def _export(request, decode, ingest, items, answer):
    """Decode the export under an export slot, ingest its ``items`` and answer in the request's format."""
    fmt = request_format(request)
    with export_slot():
        decoded = decode(
            _body(request),
            content_type=request.META.get("CONTENT_TYPE"),
            content_encoding=request.META.get("HTTP_CONTENT_ENCODING"),
            limit=settings.EVALSITE_MAX_BODY_BYTES,
        )
        outcome = ingest(project=request_project(request), **{items: decoded})
    return answer(rejected=outcome.rejected, problems=outcome.problems, fmt=fmt)


def _body(request):
    """The raw body, read up to one byte past the limit.

    A chunked body has already been read by ``evalsite.middleware.chunked_body_take``
    and declares its length like any other.
    """
    limit = settings.EVALSITE_MAX_BODY_BYTES
    declared = request.META.get("CONTENT_LENGTH") or ""
    if declared.isdigit() and int(declared) > limit:
        size = "over the limit" if request.META.get(CHUNKED_META) else f"{declared} bytes; the limit is"
        raise PayloadTooLarge(f"The body is {size} {limit} bytes (EVALSITE_MAX_BODY_BYTES).")
    stream = request.stream
    body = stream.read(limit + 1) if stream is not None else b""
    if len(body) > limit:
        raise PayloadTooLarge(f"The body is over the limit of {limit} bytes (EVALSITE_MAX_BODY_BYTES).")
    return body
