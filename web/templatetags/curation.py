"""Template filters of the curation pages: how stored JSON values and revisions are shown."""

import json

from django import template

register = template.Library()

_PREVIEW_CHARS = 140


@register.filter
def pretty(value):
    """A stored value as a reviewer reads it: text as it is, anything else as indented JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, indent=2, ensure_ascii=False)


@register.filter
def preview(value):
    """One short line of a value, for lists."""
    if value is None:
        return ""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= _PREVIEW_CHARS else text[: _PREVIEW_CHARS - 1] + "…"


@register.filter
def changes(revision):
    """``[(field, old, new)]`` of a revision (a creation lists the values it started with)."""
    old = revision.old or {}
    new = revision.new or {}
    if revision.action == "created":
        # A new case lists what it started with; empty fields say nothing.
        return [(field, None, value) for field, value in new.items() if value not in (None, "", {}, [])]
    return [(field, old.get(field), new[field]) for field in new]


@register.filter
def indent_rem(depth):
    """Left padding of a span at ``depth`` in the tree."""
    return f"{min(int(depth or 0), 12) * 1.25:.2f}rem"


@register.filter
def cents(value):
    """A cost in cents without trailing zeros (0.840000 -> 0.84)."""
    if value is None:
        return ""
    text = format(value.normalize() if hasattr(value, "normalize") else value, "f")
    return text.rstrip("0").rstrip(".") if "." in text else text
