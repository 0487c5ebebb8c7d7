"""DRF plumbing shared by every API: the JSON parser and renderer, and pagination."""

import json
from datetime import UTC, datetime
from decimal import Decimal

import orjson
from django.conf import settings
from django.core.exceptions import FieldDoesNotExist
from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.utils import extend_schema_field
from rest_framework import parsers, renderers, serializers
from rest_framework.exceptions import NotFound
from rest_framework.pagination import CursorPagination

from checks.json_rules import INT64_MAX, INT64_MIN
from evalsite.errors import Invalid, PayloadTooLarge
from evalsite.json_input import json_read, json_safe


class Text(serializers.CharField):
    """A string field whose ``max_length`` holds for the text as sent, the schema's ``maxLength``.

    DRF trims surrounding whitespace before it checks the length, so a name of the
    maximum length with a line break before it was accepted though the schema refuses it.
    A number is refused too (DRF turns ``7`` into ``"7"``): the schema says a string.
    """

    def run_validation(self, data=serializers.empty):
        if data is not serializers.empty and data is not None and not isinstance(data, str):
            self.fail("invalid")
        if isinstance(data, str) and self.max_length is not None and len(data) > self.max_length:
            self.fail("max_length", max_length=self.max_length)
        return super().run_validation(data)


@extend_schema_field({"description": "Any JSON value, null included."})
class AnyJson(serializers.JSONField):
    """A stored JSON value of any type: declared as any value (``{}``), which null already is.

    drf-spectacular writes a nullable JSON field as ``oneOf: [{}, {"type": "null"}]``, which
    no null can match: null matches both branches, and ``oneOf`` wants exactly one.
    """


@extend_schema_field({"type": "object"})
class JsonObject(serializers.JSONField):
    """A stored JSON object (with ``allow_null``, or null: the schema's type is then ``["object", "null"]``)."""


class JsonDecimal(serializers.DecimalField):
    """A decimal sent as a JSON number; DRF also takes the text ``"1"``, which the schema calls a string."""

    default_error_messages = {"not_a_number": "must be a JSON number, not {kind}"}

    def to_internal_value(self, data):
        if isinstance(data, str | bool):
            self.fail("not_a_number", kind="a string" if isinstance(data, str) else "true or false")
        return super().to_internal_value(data)


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


class CheckedCursorPagination(CursorPagination):
    """Cursor pages whose cursor is checked before it reaches the database.

    A cursor is base64 text the client can change: one that is not base64, or whose
    position is not a value of the ordering column (a date that is no date, text where
    a boolean goes, a NUL, an integer beyond 64 bits), is ``Invalid`` (400) naming
    ``cursor``, never a database error.
    """

    def paginate_queryset(self, queryset, request, view=None):
        ordering = self.get_ordering(request, queryset, view)
        self._position_field = _ordering_field(queryset.model, ordering[0] if ordering else None)
        return super().paginate_queryset(queryset, request, view)

    def get_page_size(self, request):
        # DRF falls back to the default on a page_size it cannot read; say it is wrong instead.
        raw = request.query_params.get(self.page_size_query_param) if self.page_size_query_param else None
        if raw is not None and not (raw.isascii() and raw.isdigit() and 1 <= int(raw) <= self.max_page_size):
            message = f"must be a whole number from 1 to {self.max_page_size}"
            raise Invalid(f"page_size {message}.", errors=[{"field": "page_size", "message": message}])
        return super().get_page_size(request)

    def decode_cursor(self, request):
        # DRF answers a cursor it cannot read with 404; it is a bad parameter, so a 400 naming it.
        try:
            cursor = super().decode_cursor(request)
        except NotFound:
            raise _bad_cursor() from None
        if cursor is not None and cursor.position is not None:
            _position_check(getattr(self, "_position_field", None), cursor.position)
        return cursor


def _bad_cursor():
    return Invalid(
        "The cursor is not one this list gave.",
        errors=[{"field": "cursor", "message": "is not a cursor of this list: take it from next or previous"}],
    )


def _ordering_field(model, name):
    try:
        return model._meta.get_field(name.lstrip("-")) if name else None
    except FieldDoesNotExist:
        return None


def _position_check(field, position):
    if "\x00" in position:
        raise _bad_cursor()
    if field is None:
        return
    try:
        value = field.to_python(position)
    except (DjangoValidationError, ValueError, TypeError, OverflowError):
        raise _bad_cursor() from None
    if isinstance(value, int) and not isinstance(value, bool) and not INT64_MIN <= value <= INT64_MAX:
        raise _bad_cursor()
    if isinstance(value, datetime):
        try:
            value.astimezone(UTC) if value.tzinfo else value.replace(tzinfo=UTC).astimezone(UTC)
        except OverflowError:
            raise _bad_cursor() from None


class NewestFirstCursorPagination(CheckedCursorPagination):
    """Stable pages over lists that grow while being read (newest first)."""

    ordering = "-created_at"
    page_size_query_param = "page_size"
    max_page_size = 500


def validated(serializer_class, data):
    """``data`` checked by ``serializer_class``: its validated data, or a 400 naming each bad field."""
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data
