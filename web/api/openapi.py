"""OpenAPI pieces shared by the apps' views: the problem+json error responses, list pages.

Every error answer refers to one ``Problem`` component (RFC 9457), and every list is
declared as the page it returns (``{next, previous, results}``) with its ``cursor``
and ``page_size`` parameters, so a generated client can read both.
"""

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, inline_serializer
from rest_framework import serializers

from evalsite.scopes import ANY, view_scope

PROBLEM_REF = {"$ref": "#/components/schemas/Problem"}


class ProblemError(serializers.Serializer):
    field = serializers.CharField(allow_null=True, help_text="Where the problem is (`traces[3].spans[0].kind`).")
    message = serializers.CharField()


class Problem(serializers.Serializer):
    """RFC 9457 problem details, the body of every error answer under `/v1/`."""

    type = serializers.CharField()
    title = serializers.CharField()
    status = serializers.IntegerField()
    detail = serializers.CharField()
    errors = ProblemError(many=True, required=False, help_text="Validation failures, one per field and problem.")
    required_scope = serializers.CharField(
        required=False, help_text="On a 403 `scope-missing`: the key scope the call needs."
    )


_DESCRIPTIONS = {
    400: "Invalid request; `errors` names each field and problem.",
    401: "Missing, malformed, unknown or revoked API key.",
    403: "The key or user may not do this (a key outside its scopes: `required_scope` names the one needed).",
    404: "Not found (or it belongs to another project).",
    409: "Conflicts with what is stored.",
    413: "The body is over the size limit.",
    429: "Over the project's quota; retry after `Retry-After` seconds.",
}


def problem_responses(*statuses):
    """``extend_schema(responses=...)`` entries documenting problem+json errors."""
    return {
        (code, "application/problem+json"): OpenApiResponse(response=Problem, description=_DESCRIPTIONS[code])
        for code in statuses
    }


PAGE_PARAMETERS = [
    OpenApiParameter("cursor", OpenApiTypes.STR, description="The page to read: take it from `next` or `previous`."),
    OpenApiParameter(
        "page_size", {"type": "integer", "minimum": 1, "maximum": 500}, description="Items per page (default 50)."
    ),
]


def paginated(name, item, help_text=""):
    """The page a list endpoint answers: ``{next, previous, results: [item]}`` as component ``name``."""
    return inline_serializer(
        name,
        {
            "next": serializers.URLField(allow_null=True, help_text="The next page, or null on the last one."),
            "previous": serializers.URLField(allow_null=True, help_text="The previous page, or null on the first one."),
            "results": item(many=True, help_text=help_text) if isinstance(item, type) else item,
        },
    )


def bad_request_documented(result, generator, request, public):
    """Postprocessing hook: every operation documents the errors any request may get.

    Before its view runs, any request may be refused by the middleware: a 400 for a NUL
    character in the path or a query parameter (``evalsite.middleware.NulCharacterMiddleware``)
    and a 413 for a body over the limit, chunked or not (``BodySizeLimitMiddleware``).
    An operation that needs a key also answers 401 without one, and one whose path holds
    a parameter answers 404 when no such thing exists or the text cannot name one.
    """
    for path, operations in result.get("paths", {}).items():
        for operation in operations.values():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            statuses = [400, 413] + ([401] if operation.get("security") != [{}] else [])
            statuses += [404] if "{" in path else []
            for status in statuses:
                operation["responses"].setdefault(
                    str(status),
                    {
                        "description": _DESCRIPTIONS[status],
                        "content": {"application/problem+json": {"schema": PROBLEM_REF}},
                    },
                )
    return result


_NAMED_REQUESTS = {}


def request_component(name, schema):
    """A request body described by ``schema`` (the rules' own JSON Schema) as component ``name``.

    Client generators then give the body a type of that name; the schema is added to the
    document's components by ``named_requests_added``.
    """
    _NAMED_REQUESTS[name] = {k: v for k, v in schema.items() if k != "$schema"}
    return {"application/json": {"$ref": f"#/components/schemas/{name}"}}


def named_requests_added(result, generator, request, public):
    """Postprocessing hook: the components ``request_component`` named."""
    result.setdefault("components", {}).setdefault("schemas", {}).update(_NAMED_REQUESTS)
    return result


class ApiKeyScheme(OpenApiAuthenticationExtension):
    target_class = "evalsite.auth.ApiKeyAuthentication"
    name = "ApiKey"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "A project API key: `Authorization: Bearer esk_...` (see `manage.py create_api_key`). "
            "Every key but a feedback-only one reads its project; each write names the scope it needs in "
            "`x-required-scope`.",
        }


# Reads are open to every key of the project but a feedback-only one; the extension says so rather than omit it.
ANY_SCOPE = ANY


class ScopedAutoSchema(AutoSchema):
    """Each operation says which key scope it needs (``x-required-scope``) and documents the 403."""

    def get_operation(self, *args, **kwargs):
        operation = super().get_operation(*args, **kwargs)
        if operation is None:
            return None
        scope = view_scope(self.view, self.method)
        operation["x-required-scope"] = scope or ANY_SCOPE
        if scope is not None:
            needs = f"Needs a key with scope `{scope}` (or `admin`); other keys get 403 `scope-missing`."
            operation["description"] = f"{operation.get('description', '')}\n\n{needs}".strip()
        # A read answers 403 too, to a key that may only send feedback.
        operation["responses"].setdefault(
            "403",
            {"content": {"application/problem+json": {"schema": PROBLEM_REF}}, "description": _DESCRIPTIONS[403]},
        )
        return operation
