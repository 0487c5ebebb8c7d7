"""The one reader of JSON bodies: ``checks.json_rules`` with its refusals as ``Invalid`` (400)."""

from checks.json_rules import DEPTH_MESSAGE, JSON_MAX_DEPTH, JsonRefused, json_parse, json_safe
from evalsite.errors import Invalid

__all__ = ["DEPTH_MESSAGE", "JSON_MAX_DEPTH", "json_read", "json_safe"]


def json_read(body, *, where="body", nul=True):
    """The JSON value of ``body`` by the rules of ``checks.json_rules``; ``Invalid`` naming the path."""
    try:
        return json_parse(body, where=where, nul=nul)
    except JsonRefused as exc:
        raise Invalid(exc.detail, errors=[{"field": exc.field, "message": exc.message}]) from None
