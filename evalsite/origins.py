"""Web page origins a project lets send end users' feedback from a browser (CORS).

An origin is ``scheme://host[:port]`` (``https://app.example.com``), as a browser sends it
in ``Origin``: http or https, no path (a lone trailing slash is dropped), lower case. A preflight carries
no key, so it is answered for an origin some project lists (``origin_listed``); the
request that follows is refused unless the key's own project lists it.
"""

import json
from urllib.parse import urlsplit

from evalsite.models import Project

MAX_ORIGINS = 20
ORIGIN_MAX = 200


def origin_clean(text):
    """The origin ``text`` names, in the form browsers send; ``ValueError`` says what is wrong."""
    origin = text.strip().lower()
    try:
        parts = urlsplit(origin)
        parts.port  # noqa: B018 - raises on a port that is not a number
    except ValueError:
        raise ValueError(f"{text!r} is not an origin such as https://app.example.com") from None
    if parts.scheme not in ("http", "https") or not parts.hostname or len(origin) > ORIGIN_MAX:
        raise ValueError(f"{text!r} is not an origin such as https://app.example.com")
    if parts.path not in ("", "/") or parts.query or parts.fragment or parts.username or parts.password:
        raise ValueError(f"{text!r} has more than scheme://host[:port]: an origin has no path")
    return f"{parts.scheme}://{parts.netloc}"


def origins_clean(entries):
    """The distinct origins of ``entries`` (strings), in order; ``ValueError`` names the first bad one."""
    origins = []
    for entry in entries:
        if entry.strip() and (origin := origin_clean(entry)) not in origins:
            origins.append(origin)
    if len(origins) > MAX_ORIGINS:
        raise ValueError(f"at most {MAX_ORIGINS} origins")
    return origins


def origin_listed(origin):
    """Whether some project lists ``origin`` (the answer to a preflight, which names no project)."""
    if not origin or len(origin) > ORIGIN_MAX:
        return False
    # A text match finds the few candidates on every database; the exact check is below.
    candidates = Project.objects.filter(feedback_origins__icontains=json.dumps(origin))
    return any(origin in origins for origins in candidates.values_list("feedback_origins", flat=True))


def origin_allowed(project, origin):
    return origin in project.feedback_origins
