"""The address a request came from, as far as this site can trust it.

Behind ``EVALSITE_TRUSTED_PROXIES`` reverse proxies (default 0), each appends the
address it received from to ``X-Forwarded-For``, so the client's is the entry that many
places from the end; anything before it was written by the client and is not trusted.
With no trusted proxy, the socket's address (``REMOTE_ADDR``) is the answer. The login
lockout (django-axes, ``AXES_CLIENT_IP_CALLABLE``) counts failures per this address.
"""

from django.conf import settings


def client_address(request):
    trusted = settings.EVALSITE_TRUSTED_PROXIES
    forwarded = [part.strip() for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if part.strip()]
    if trusted and len(forwarded) >= trusted:
        return forwarded[-trusted]
    # None, not a placeholder, when there is no address (a request built in-process, as
    # Django's test client's force_login does): the lockout's log stores it in an
    # address column, which PostgreSQL checks.
    return request.META.get("REMOTE_ADDR") or None
