"""DRF plumbing shared by every API: a fast JSON parser and renderer, and pagination."""

from decimal import Decimal

import orjson
from django.conf import settings
from rest_framework import parsers, renderers
from rest_framework.exceptions import NotFound, ParseError
from rest_framework.pagination import CursorPagination

from evalsite.errors import NUL_MESSAGE, Invalid, PayloadTooLarge


class FastJSONParser(parsers.BaseParser):
    """JSON via orjson (several times faster than ``json`` on large batches).

    The body is read up to ``EVALSITE_MAX_BODY_BYTES``: DRF reads the raw stream, which
    Django's own upload limit does not guard when no Content-Length is sent.
    """

    media_type = "application/json"

    def parse(self, stream, media_type=None, parser_context=None):
        if stream is None:
            return None
        limit = settings.EVALSITE_MAX_BODY_BYTES
        body = stream.read(limit + 1)
        if len(body) > limit:
            raise PayloadTooLarge(f"The body is over the limit of {limit} bytes (EVALSITE_MAX_BODY_BYTES).")
        if not body:
            return None
        try:
            data = orjson.loads(body)
        except orjson.JSONDecodeError as exc:
            raise ParseError(f"The body is not valid JSON: {exc}") from None
        # PostgreSQL cannot hold NUL in text: refuse it here, naming where it is, rather
        # than let a write fail halfway. JSON can only spell it escaped.
        if b"\\u0000" in body and (where := nul_path(data)) is not None:
            raise Invalid(f"{where} {NUL_MESSAGE}.", errors=[{"field": where, "message": NUL_MESSAGE}])
        return data


def nul_path(value, path=""):
    """The path (``traces[0].input``) of the first string or key holding a NUL character, or None."""
    if isinstance(value, str):
        return (path or "body") if "\x00" in value else None
    if isinstance(value, dict):
        for key, item in value.items():
            where = f"{path}.{key}" if path else str(key)
            if "\x00" in key:
                return where.replace("\x00", "\\u0000")
            if (found := nul_path(item, where)) is not None:
                return found
    elif isinstance(value, list):
        for index, item in enumerate(value):
            if (found := nul_path(item, f"{path}[{index}]")) is not None:
                return found
    return None


def _default(value):
    if isinstance(value, Decimal):
        return float(value)
    return str(value)


class FastJSONRenderer(renderers.BaseRenderer):
    media_type = "application/json"
    format = "json"
    charset = None

    def render(self, data, accepted_media_type=None, renderer_context=None):
        if data is None:
            return b""
        return orjson.dumps(data, default=_default)


class NewestFirstCursorPagination(CursorPagination):
    """Stable pages over lists that grow while being read (newest first)."""

    ordering = "-created_at"
    page_size_query_param = "page_size"
    max_page_size = 500

    def decode_cursor(self, request):
        # DRF answers a cursor it cannot read with 404; it is a bad parameter, so a 400 naming it.
        try:
            return super().decode_cursor(request)
        except NotFound:
            raise Invalid(
                "The cursor is not one this list gave.",
                errors=[{"field": "cursor", "message": "is not a cursor of this list: take it from next or previous"}],
            ) from None


def validated(serializer_class, data):
    """``data`` checked by ``serializer_class``: its validated data, or a 400 naming each bad field."""
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data
