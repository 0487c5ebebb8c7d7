"""Requests refused before any view runs: bodies over the size limit (413), and NUL
characters in the path or the query string (400); chunked bodies made readable."""

from io import BytesIO

from django.conf import settings
from django.core.exceptions import BadRequest
from django.core.handlers.wsgi import LimitedStream

from evalsite.errors import NUL_MESSAGE, Invalid, PayloadTooLarge, domain_error_response


class BodySizeLimitMiddleware:
    """Refuse bodies over ``EVALSITE_MAX_BODY_BYTES`` with a 413 problem.

    A declared ``Content-Length`` is checked here. A body sent without one
    (``Transfer-Encoding: chunked``, which the server has already de-chunked) is read
    here up to one byte past the limit: Django reads a body only as far as its
    ``Content-Length``, so without this it would look empty.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    # The OTLP endpoint enforces the same limit itself, answering in the exporter's own
    # format (a google.rpc.Status, protobuf or JSON) as OTLP/HTTP requires.
    SELF_LIMITED_PATHS = frozenset({"/v1/traces"})

    def __call__(self, request):
        limit = settings.EVALSITE_MAX_BODY_BYTES
        over = chunked_body_take(request, limit)
        if request.path in self.SELF_LIMITED_PATHS:
            return self.get_response(request)
        if over:
            return domain_error_response(
                PayloadTooLarge(f"The body is over the limit of {limit} bytes (EVALSITE_MAX_BODY_BYTES).")
            )
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        if length > limit:
            return domain_error_response(
                PayloadTooLarge(f"The body is {length} bytes; the limit is {limit} bytes (EVALSITE_MAX_BODY_BYTES).")
            )
        return self.get_response(request)


CHUNKED_META = "evalsite.chunked"


def chunked_body_take(request, limit):
    """Read a chunked body (no ``Content-Length``) into the request, up to ``limit`` + 1 bytes.

    The request then reads like one that declared its length. Returns True when the
    body is over ``limit`` (its length then reads as ``limit`` + 1).
    """
    meta = request.META
    if meta.get("CONTENT_LENGTH") or "chunked" not in meta.get("HTTP_TRANSFER_ENCODING", "").lower():
        return False
    body = meta["wsgi.input"].read(limit + 1)
    meta["CONTENT_LENGTH"] = str(len(body))
    meta[CHUNKED_META] = True
    request._stream = LimitedStream(BytesIO(body), len(body))
    return len(body) > limit


class NulCharacterMiddleware:
    """Refuse a NUL character in the path or a query parameter with a 400 naming it.

    PostgreSQL cannot hold NUL in text, so a lookup or a filter with one would fail in
    the database. JSON bodies are checked by ``web.api.rest.FastJSONParser``.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if "\x00" in request.path:
            # Django passes a %00 in the URL through to the view: no name can hold it.
            if not request.path.startswith("/v1/"):
                raise BadRequest(f"The path {NUL_MESSAGE}.")  # the pages' own 400 page
            return domain_error_response(
                Invalid(f"The path {NUL_MESSAGE}.", errors=[{"field": "path", "message": NUL_MESSAGE}])
            )
        for name, values in request.GET.lists():
            if "\x00" in name or any("\x00" in value for value in values):
                field = name.replace("\x00", "\\u0000")
                return domain_error_response(
                    Invalid(
                        f"The query parameter {field!r} {NUL_MESSAGE}.",
                        errors=[{"field": field, "message": NUL_MESSAGE}],
                    )
                )
        return self.get_response(request)
