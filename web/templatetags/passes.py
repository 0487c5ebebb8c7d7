"""Template filters of the scoring pages: how a pass's scorer entries and a score's config read."""

import json

from django import template

register = template.Library()


@register.filter
def scorer_entries(entries):
    """A pass's ``scorers`` as one line: ``json_valid, json_valid (schema = {...})``.

    An entry is a scorer id, or ``{"scorer": id, "config": {...}}`` when the pass names
    the scorer with its own settings; those are written ``key = JSON value``.
    """
    return ", ".join(_entry_text(entry) for entry in entries or ())


@register.filter
def config_settings(config):
    """A scorer's config as ``key = JSON value, …`` (empty for no settings)."""
    if not isinstance(config, dict):
        return ""
    return ", ".join(f"{key} = {json.dumps(value, ensure_ascii=False)}" for key, value in config.items())


def _entry_text(entry):
    if not isinstance(entry, dict):
        return str(entry)
    settings = config_settings(entry.get("config"))
    return f"{entry.get('scorer', '')} ({settings})" if settings else str(entry.get("scorer", ""))
