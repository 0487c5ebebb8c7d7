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
    """``[(strict regex, loose regex, method, query parameter names)]`` for every documented operation.

    A path parameter is one segment in the strict regex; in the loose one it may hold
    '/' (dataset and experiment names).
    """
    schema = SchemaGenerator().get_schema(request=None, public=True)
    operations = []
    for path, item in schema["paths"].items():
        escaped = re.escape(path)
        strict = re.compile("^" + re.sub(r"\\\{[^}]+\\\}", "[^/]+", escaped) + "$")
        loose = re.compile("^" + re.sub(r"\\\{[^}]+\\\}", ".+", escaped) + "$")
        for method, operation in item.items():
            names = {p["name"] for p in operation.get("parameters", ()) if p.get("in") == "query"}
            operations.append((strict, loose, method.upper(), names))
    return operations


def taken_parameters(path, method):
    """The query parameters the operation at ``path`` takes, or ``None`` when none is documented.

    Paths matched segment by segment win; only when none matches may a parameter span
    several segments. A method the path does not document is left to the view (405).
    """
    for which in (0, 1):
        matched = [(m, names) for *patterns, m, names in _operations() if patterns[which].match(path)]
        if matched:
            methods = [names for m, names in matched if m == method]
            return set().union(*methods) if methods else None
    return None


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
