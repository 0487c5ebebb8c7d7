"""Keeping the judge's api key out of everything the judge code returns or logs.

The key is write-only at every surface. The client never puts it in a message, but a
model server may echo the ``Authorization`` header back in an error body, and that body
is quoted in the abstention. ``redact`` replaces the key (and its JSON-escaped and
URL-encoded spellings) wherever it appears in a string, a dict or a list.
"""

import json
from urllib.parse import quote

REDACTED = "[redacted]"


def secret_spellings(secret):
    """The ways ``secret`` may appear in a reply: as is, JSON-escaped, URL-encoded."""
    if not secret:
        return ()
    spellings = {secret, json.dumps(secret)[1:-1], secret.replace("/", "\\/"), quote(secret, safe="")}
    # Longest first, so a longer spelling is not half-replaced by a shorter one.
    return tuple(sorted(spellings, key=len, reverse=True))


def redact(value, secret):
    """``value`` with every spelling of ``secret`` replaced by ``[redacted]`` (a copy; any depth)."""
    spellings = secret_spellings(secret)
    if not spellings:
        return value
    return _redact(value, spellings)


def _redact(value, spellings):
    if isinstance(value, str):
        for spelling in spellings:
            if spelling in value:
                value = value.replace(spelling, REDACTED)
        return value
    if isinstance(value, dict):
        return {_redact(k, spellings): _redact(v, spellings) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_redact(v, spellings) for v in value]
    return value
