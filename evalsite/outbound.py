"""Whether the server may send a request of its own to ``url``: one check, one domain error.

``outbound_url_check(url)`` applies the address rule of ``checks.outbound`` (link-local,
cloud metadata, unspecified and multicast addresses always refused; loopback and private
ones unless ``EVALSITE_OUTBOUND_ALLOW_PRIVATE``) to the URL's host, after checking the
URL itself is an http(s) URL with a host. It raises ``Invalid`` naming ``field`` (so an
admin typing a webhook sees which one is refused, and why) and returns the URL.
A host name is checked by what it resolves to now; call it again just before sending.
"""

from urllib.parse import urlsplit

from django.conf import settings

from checks.outbound import host_refusal
from evalsite.errors import Invalid


def outbound_url_check(url, *, field="url"):
    """``url`` when the server may call it; ``Invalid`` naming ``field`` otherwise."""
    message = _url_problem(url)
    if message is None:
        refusal = host_refusal(urlsplit(url).hostname, allow_private=settings.EVALSITE_OUTBOUND_ALLOW_PRIVATE)
        message = None if refusal is None else f"may not be called: {refusal}"
    if message is not None:
        raise Invalid(f"{field} {message}.", errors=[{"field": field, "message": message}])
    return url


def _url_problem(url):
    if not isinstance(url, str) or not 0 < len(url) <= 2000:
        return "must be a URL of at most 2000 characters"
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        return "is not a valid URL"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "must be an http:// or https:// URL with a host"
    if parts.username or parts.password:
        return "must not hold a user name or password"
    return None
