"""Domain errors and their one translation into HTTP: RFC 9457 problem details.

Services raise the exceptions below; ``problem_exception_handler`` (DRF's
``EXCEPTION_HANDLER``) and the Django error views turn them, and DRF's own
exceptions, into ``application/problem+json`` bodies with ``type``, ``title``,
``status``, ``detail`` and, for validation failures, ``errors: [{field, message}]``.
"""

from http import HTTPStatus

import orjson
from django.core.exceptions import RequestDataTooBig
from django.db import InterfaceError, OperationalError
from django.http import Http404, HttpResponse
from rest_framework import exceptions as drf_exceptions
from rest_framework import status as http_status

from checks import json_rules

PROBLEM_CONTENT_TYPE = "application/problem+json"
PROBLEM_TYPE_BASE = "https://evalsite.dev/problems/"


class DomainError(Exception):
    status = http_status.HTTP_400_BAD_REQUEST
    code = "bad-request"
    title = "Bad request"

    def __init__(self, detail, *, errors=None, headers=None, extra=None):
        super().__init__(detail)
        self.detail = detail
        self.errors = errors or []
        self.headers = headers or {}
        self.extra = extra or {}


# PostgreSQL cannot store NUL in text: every place that refuses one says it the same way.
NUL_MESSAGE = json_rules.NUL_MESSAGE


class Invalid(DomainError):
    """The request names something wrong; ``errors`` lists each field and problem."""

    status = http_status.HTTP_400_BAD_REQUEST
    code = "validation-error"
    title = "Invalid request"


class NotFound(DomainError):
    """Missing, or belongs to another project: the answer is the same for both."""

    status = http_status.HTTP_404_NOT_FOUND
    code = "not-found"
    title = "Not found"


class ScopeMissing(DomainError):
    """The key is valid but its scopes do not cover the call; names the scope it needs."""

    status = http_status.HTTP_403_FORBIDDEN
    code = "scope-missing"
    title = "Scope missing"

    def __init__(self, scope, *, detail=None):
        super().__init__(
            detail or f"This API key has no {scope!r} scope; use a key with {scope!r} (or admin) for this call.",
            extra={"required_scope": scope},
        )


class Conflict(DomainError):
    status = http_status.HTTP_409_CONFLICT
    code = "conflict"
    title = "Conflict"


class RetryLater(DomainError):
    """An error the client should retry after ``retry_after`` seconds (``Retry-After``)."""

    def __init__(self, detail, *, retry_after):
        super().__init__(detail, headers={"Retry-After": str(retry_after)}, extra={"retry_after": retry_after})


class QuotaExceeded(RetryLater):
    status = http_status.HTTP_429_TOO_MANY_REQUESTS
    code = "quota-exceeded"
    title = "Quota exceeded"


class RateLimited(RetryLater):
    status = http_status.HTTP_429_TOO_MANY_REQUESTS
    code = "rate-limited"
    title = "Too many requests"


class OriginNotAllowed(DomainError):
    """A browser page whose origin the project does not list sent the request (CORS)."""

    status = http_status.HTTP_403_FORBIDDEN
    code = "origin-not-allowed"
    title = "Origin not allowed"


class DatabaseUnavailable(RetryLater):
    """The database cannot be reached (or refused the work for now): retry shortly."""

    status = http_status.HTTP_503_SERVICE_UNAVAILABLE
    code = "database-unavailable"
    title = "Service unavailable"


# Seconds a client waits before retrying while the database is away: short, because the
# server reconnects on the next request once it is back.
DATABASE_RETRY_AFTER_SECONDS = 5


def database_unavailable(exc):
    """A ``DatabaseUnavailable`` for a lost or refused database connection, else ``None``.

    ``OperationalError`` and ``InterfaceError`` are what the driver raises when the
    server is down, restarting, out of connections, or closed the connection: all
    transient, so the answer is 503 with ``Retry-After``, never 500. Integrity and
    programming errors are bugs or conflicts and keep their own answers.
    """
    if isinstance(exc, (OperationalError, InterfaceError)):
        return DatabaseUnavailable(
            "The database is temporarily unavailable or busy; retry shortly.", retry_after=DATABASE_RETRY_AFTER_SECONDS
        )
    return None


class PayloadTooLarge(DomainError):
    status = http_status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    code = "payload-too-large"
    title = "Payload too large"


def problem_response(status, title, detail, *, code=None, errors=None, headers=None, extra=None):
    body = {
        "type": PROBLEM_TYPE_BASE + (code or _slug(title)),
        "title": title,
        "status": status,
        "detail": detail,
    }
    if errors:
        body["errors"] = errors
    if extra:
        body.update(extra)
    response = HttpResponse(orjson.dumps(body), status=status, content_type=PROBLEM_CONTENT_TYPE)
    for name, value in (headers or {}).items():
        response[name] = value
    return response


def domain_error_response(error):
    return problem_response(
        error.status,
        error.title,
        error.detail,
        code=error.code,
        errors=error.errors,
        headers=error.headers,
        extra=error.extra,
    )


def problem_exception_handler(exc, context):
    """DRF's exception handler: every error leaves the API as problem+json."""
    exc = database_unavailable(exc) or exc
    if isinstance(exc, DomainError):
        return domain_error_response(exc)
    if isinstance(exc, RequestDataTooBig):
        return domain_error_response(PayloadTooLarge(str(exc)))
    if isinstance(exc, Http404):
        return domain_error_response(NotFound("Not found."))
    if isinstance(exc, drf_exceptions.ValidationError):
        return problem_response(
            400,
            "Invalid request",
            "The request has invalid fields; see errors.",
            code="validation-error",
            errors=_flatten_errors(exc.detail),
        )
    # Imported here: rest_framework.views loads the renderers at import time, and they
    # import this module.
    from rest_framework.views import exception_handler as drf_exception_handler

    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    detail = response.data.get("detail", "") if isinstance(response.data, dict) else str(response.data)
    headers = {name: value for name, value in response.items() if name in ("WWW-Authenticate", "Retry-After", "Allow")}
    title = http_status_title(response.status_code)
    return problem_response(response.status_code, title, str(detail), headers=headers)


def http_status_title(status):
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Error"


def _flatten_errors(detail, prefix=""):
    """DRF's nested error dict/list as ``[{field, message}]`` with dotted paths."""
    out = []
    if isinstance(detail, dict):
        for key, value in detail.items():
            name = "" if key == "non_field_errors" else str(key)
            path = f"{prefix}.{name}" if prefix and name else (prefix or name)
            out.extend(_flatten_errors(value, path))
    elif isinstance(detail, list):
        if all(not isinstance(item, (dict, list)) for item in detail):
            out.extend({"field": prefix or None, "message": str(item)} for item in detail)
        else:
            for index, item in enumerate(detail):
                out.extend(_flatten_errors(item, f"{prefix}[{index}]"))
    else:
        out.append({"field": prefix or None, "message": str(detail)})
    return out


def _slug(title):
    return title.lower().replace(" ", "-")
