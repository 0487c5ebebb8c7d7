"""Query parameters an API operation does not take are a 400, not silently ignored.

A misspelt filter (``?experment=v2``) would otherwise list everything and look like an
answer. The parameters each operation takes are the ones its OpenAPI description lists:
one source, so the documentation and the check cannot disagree. The description is
built once per process, on the first API request.
"""

import functools
import re

from drf_spectacular.generators import SchemaGenerator

from evalsite.errors import Invalid, domain_error_response

API_PREFIX = "/v1/api/"


@functools.cache
def _operations():
    """``[(path regex, method, query parameter names)]`` for every documented operation."""
    schema = SchemaGenerator().get_schema(request=None, public=True)
    operations = []
    for path, item in schema["paths"].items():
        # A path parameter may hold '/' (dataset names): match any text, and union the
        # parameters of every operation a path matches.
        pattern = re.compile("^" + re.sub(r"\\\{[^}]+\\\}", ".+", re.escape(path)) + "$")
        for method, operation in item.items():
            names = {p["name"] for p in operation.get("parameters", ()) if p.get("in") == "query"}
            operations.append((pattern, method.upper(), names))
    return operations


def taken_parameters(path, method):
    """The query parameters the operations at ``path`` take, or ``None`` if none is documented there."""
    taken = None
    for pattern, operation_method, names in _operations():
        if operation_method == method and pattern.match(path):
            taken = (taken or set()) | names
    return taken


class UnknownQueryParameterMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.path.startswith(API_PREFIX) and request.GET:
            taken = taken_parameters(request.path, request.method)
            unknown = sorted(set(request.GET) - taken) if taken is not None else []
            if unknown:
                listed = ", ".join(sorted(taken)) or "none"
                return domain_error_response(
                    Invalid(
                        f"Unknown query parameter(s): {', '.join(unknown)}. This operation takes: {listed}.",
                        errors=[
                            {"field": name, "message": "is not a query parameter of this operation"} for name in unknown
                        ],
                    )
                )
        return self.get_response(request)
