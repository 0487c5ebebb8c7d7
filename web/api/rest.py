"""DRF plumbing shared by every API: the JSON parser and renderer, and pagination."""

import json
from decimal import Decimal

import orjson
from django.conf import settings
from rest_framework import parsers, renderers
from rest_framework.exceptions import NotFound
from rest_framework.pagination import CursorPagination

from evalsite.errors import Invalid, PayloadTooLarge
from evalsite.json_input import json_read, json_safe


class FastJSONParser(parsers.BaseParser):
    """JSON bodies by the rules of ``evalsite.json_input`` (range, depth, duplicate keys, NUL).

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
        return json_read(body)


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
        try:
            return orjson.dumps(data, default=_default)
        except orjson.JSONEncodeError:
            # A value stored before the input rules (an integer beyond 64 bits, nesting
            # past orjson's 254 levels) still shows.
            return json.dumps(json_safe(data), default=_default, ensure_ascii=False).encode()


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
