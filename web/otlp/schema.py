"""The OpenAPI description of ``POST /v1/traces``: OTLP bodies and answers, both encodings.

Only the parts evalsite reads are described; OTLP allows more, and unknown fields are
ignored, so every object stays open (``additionalProperties`` allowed).
"""

from drf_spectacular.utils import OpenApiResponse

from web.api.openapi import problem_responses

_int64 = {"type": ["string", "integer"], "description": "A 64-bit integer, as a decimal string or a number."}
_any_value = {
    "type": "object",
    "description": "An OTLP AnyValue: one of stringValue, boolValue, intValue, doubleValue, arrayValue, "
    "kvlistValue, bytesValue.",
    "properties": {
        "stringValue": {"type": "string"},
        "boolValue": {"type": "boolean"},
        "intValue": _int64,
        "doubleValue": {"type": "number"},
    },
}
_attributes = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["key"],
        "properties": {"key": {"type": "string"}, "value": _any_value},
    },
}
_span = {
    "type": "object",
    "properties": {
        "traceId": {"type": "string", "description": "32 hex digits (base64 of 16 bytes is accepted too)."},
        "spanId": {"type": "string", "description": "16 hex digits (base64 of 8 bytes is accepted too)."},
        "parentSpanId": {"type": "string", "description": "Empty or absent for a root span."},
        "name": {"type": "string"},
        "kind": {"type": "integer", "minimum": 0, "maximum": 5},
        "startTimeUnixNano": _int64,
        "endTimeUnixNano": _int64,
        "attributes": _attributes,
        "events": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"name": {"type": "string"}, "timeUnixNano": _int64, "attributes": _attributes},
            },
        },
        "status": {
            "type": "object",
            "properties": {
                "code": {"type": "integer", "minimum": 0, "maximum": 2, "description": "0 unset, 1 ok, 2 error."},
                "message": {"type": "string"},
            },
        },
    },
}
EXPORT_REQUEST_SCHEMA = {
    "type": "object",
    "description": "An OTLP ExportTraceServiceRequest in its JSON encoding.",
    "properties": {
        "resourceSpans": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "resource": {"type": "object", "properties": {"attributes": _attributes}},
                    "scopeSpans": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "scope": {
                                    "type": "object",
                                    "properties": {"name": {"type": "string"}, "version": {"type": "string"}},
                                },
                                "spans": {"type": "array", "items": _span},
                            },
                        },
                    },
                },
            },
        }
    },
}
EXPORT_RESPONSE_SCHEMA = {
    "type": "object",
    "description": "An OTLP ExportTraceServiceResponse; `partialSuccess` is present when spans were rejected "
    "or there is a warning.",
    "properties": {
        "partialSuccess": {
            "type": "object",
            "properties": {"rejectedSpans": _int64, "errorMessage": {"type": "string"}},
        }
    },
}
_log_record = {
    "type": "object",
    "properties": {
        "traceId": {"type": "string", "description": "32 hex digits: the trace of the span the record is about."},
        "spanId": {"type": "string", "description": "16 hex digits: the span the record is about."},
        "eventName": {"type": "string", "description": "The GenAI event (or the `event.name` attribute)."},
        "timeUnixNano": _int64,
        "attributes": _attributes,
        "body": _any_value,
    },
}
LOGS_REQUEST_SCHEMA = {
    "type": "object",
    "description": "An OTLP ExportLogsServiceRequest in its JSON encoding.",
    "properties": {
        "resourceLogs": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "resource": {"type": "object", "properties": {"attributes": _attributes}},
                    "scopeLogs": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {"logRecords": {"type": "array", "items": _log_record}},
                        },
                    },
                },
            },
        }
    },
}
LOGS_RESPONSE_SCHEMA = {
    "type": "object",
    "description": "An OTLP ExportLogsServiceResponse; `partialSuccess` is present when records were rejected.",
    "properties": {
        "partialSuccess": {
            "type": "object",
            "properties": {"rejectedLogRecords": _int64, "errorMessage": {"type": "string"}},
        }
    },
}
STATUS_SCHEMA = {
    "type": "object",
    "description": "A google.rpc.Status.",
    "properties": {
        "code": {"type": "integer", "description": "The gRPC status code."},
        "message": {"type": "string"},
        "details": {"type": "array", "items": {"type": "object"}},
    },
}
_BINARY = {"type": "string", "format": "binary"}

_ERRORS = {
    400: "The body cannot be decoded.",
    401: "Missing, malformed, unknown or revoked API key.",
    413: "The body, or the body once decompressed, is over `EVALSITE_MAX_BODY_BYTES`.",
    415: "A Content-Type other than application/x-protobuf or application/json, or an unknown Content-Encoding.",
    429: "A new run would take the project over its quota; nothing was written. Retry after `Retry-After`.",
    503: "Overloaded (too many exports at once, or the database could not take the write); retry after `Retry-After`.",
}


def export_responses():
    """``extend_schema(responses=...)`` for the traces endpoint: each status in both encodings."""
    responses = {
        (200, "application/json"): OpenApiResponse(
            EXPORT_RESPONSE_SCHEMA, description="Taken (see `partialSuccess` for rejected spans)."
        ),
        (200, "application/x-protobuf"): OpenApiResponse(_BINARY, description="ExportTraceServiceResponse."),
    }
    return _with_errors(responses, _ERRORS)


def logs_export_responses():
    """``extend_schema(responses=...)`` for the logs endpoint."""
    responses = {
        (200, "application/json"): OpenApiResponse(
            LOGS_RESPONSE_SCHEMA, description="Taken (see `partialSuccess` for rejected records)."
        ),
        (200, "application/x-protobuf"): OpenApiResponse(_BINARY, description="ExportLogsServiceResponse."),
    }
    return _with_errors(responses, {k: v for k, v in _ERRORS.items() if k != 429})


def _with_errors(responses, errors):
    for status, description in errors.items():
        responses[(status, "application/json")] = OpenApiResponse(STATUS_SCHEMA, description=description)
        responses[(status, "application/x-protobuf")] = OpenApiResponse(
            _BINARY, description=description + " A google.rpc.Status."
        )
    # A Content-Length over the limit is refused before the endpoint runs, like everywhere else.
    responses.update(problem_responses(413))
    return responses


def export_body_required(result, generator, request, public):
    """Postprocessing hook: an export's body (traces or logs) is required (without one the answer is a 415).

    drf-spectacular marks a body required only from a serializer's required fields, and
    this one is described by a plain schema.
    """
    for path in ("/v1/traces", "/v1/logs"):
        operation = result.get("paths", {}).get(path, {}).get("post")
        if operation and "requestBody" in operation:
            operation["requestBody"]["required"] = True
    return result
