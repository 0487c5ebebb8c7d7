"""OpenAPI pieces shared by the apps' views: the problem+json error responses."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.utils import OpenApiResponse

PROBLEM_SCHEMA = {
    "type": "object",
    "description": "RFC 9457 problem details.",
    "required": ["type", "title", "status", "detail"],
    "properties": {
        "type": {"type": "string"},
        "title": {"type": "string"},
        "status": {"type": "integer"},
        "detail": {"type": "string"},
        "errors": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"field": {"type": ["string", "null"]}, "message": {"type": "string"}},
            },
        },
    },
}

_DESCRIPTIONS = {
    400: "Invalid request; `errors` names each field and problem.",
    401: "Missing, malformed, unknown or revoked API key.",
    403: "The key or user may not do this.",
    404: "Not found (or it belongs to another project).",
    409: "Conflicts with what is stored.",
    413: "The body is over the size limit.",
    429: "Over the project's quota; retry after `Retry-After` seconds.",
}


def problem_responses(*statuses):
    """``extend_schema(responses=...)`` entries documenting problem+json errors."""
    return {
        (code, "application/problem+json"): OpenApiResponse(response=PROBLEM_SCHEMA, description=_DESCRIPTIONS[code])
        for code in statuses
    }


def bad_request_documented(result, generator, request, public):
    """Postprocessing hook: every operation documents the 400 it may answer.

    Any request may get one before its view runs (a NUL character in a query parameter,
    ``evalsite.middleware.NulCharacterMiddleware``), so no operation is without it.
    """
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            if isinstance(operation, dict) and "responses" in operation:
                operation["responses"].setdefault(
                    "400",
                    {
                        "description": _DESCRIPTIONS[400],
                        "content": {"application/problem+json": {"schema": PROBLEM_SCHEMA}},
                    },
                )
    return result


class ApiKeyScheme(OpenApiAuthenticationExtension):
    target_class = "evalsite.auth.ApiKeyAuthentication"
    name = "ApiKey"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "A project API key: `Authorization: Bearer esk_...` (see `manage.py create_api_key`).",
        }
