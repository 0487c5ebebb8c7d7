"""API authentication: ``Authorization: Bearer <key>`` identifies a project.

No key, a malformed key, an unknown key and a revoked key are all 401. Checking a key
is one indexed lookup by prefix and one SHA-256; ``last_used_at`` is written at most
once a minute per key, so a busy client does not turn every read into a write.
"""

from datetime import timedelta

from django.contrib.auth.models import AnonymousUser
from django.db.models import Q
from django.utils import timezone
from rest_framework import authentication, exceptions, permissions

from evalsite.errors import ScopeMissing
from evalsite.keys import key_split, secret_matches
from evalsite.models import ApiKey
from evalsite.scopes import ANY, key_has_scope, key_may_read, view_scope

LAST_USED_RESOLUTION = timedelta(minutes=1)


class ApiKeyAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).decode("latin-1")
        if not header:
            return None
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise exceptions.AuthenticationFailed("Use the header 'Authorization: Bearer <key>'.")
        return AnonymousUser(), api_key_verify(token.strip())

    def authenticate_header(self, request):
        return f'{self.keyword} realm="evalsite"'


def api_key_verify(full_key):
    """The active ``ApiKey`` for a full key string; raises ``AuthenticationFailed``."""
    parts = key_split(full_key)
    if parts is None:
        raise exceptions.AuthenticationFailed("The API key is malformed.")
    prefix, secret = parts
    key = ApiKey.objects.select_related("project").filter(prefix=prefix).first()
    if key is None or not secret_matches(secret, key.secret_hash):
        raise exceptions.AuthenticationFailed("The API key is not valid.")
    if key.revoked_at is not None:
        raise exceptions.AuthenticationFailed("The API key has been revoked.")
    now = timezone.now()
    if key.last_used_at is None or now - key.last_used_at >= LAST_USED_RESOLUTION:
        ApiKey.objects.filter(pk=key.pk).filter(
            Q(last_used_at__isnull=True) | Q(last_used_at__lt=now - LAST_USED_RESOLUTION)
        ).update(last_used_at=now)
    return key


class HasProjectKey(permissions.BasePermission):
    """Every API view needs a project key; the project it names scopes every query.

    A write also needs the scope the view declares for its method (``evalsite.scopes``):
    a key without it gets a 403 problem naming ``required_scope``. A read needs a key
    that may read: a feedback-only key gets the 403 naming ``any``.
    """

    def has_permission(self, request, view):
        if not isinstance(request.auth, ApiKey):
            return False
        scope = view_scope(view, request.method)
        if scope is not None and not key_has_scope(request.auth, scope):
            raise ScopeMissing(scope)
        if scope is None and not key_may_read(request.auth):
            raise ScopeMissing(
                ANY, detail="This API key may only send feedback; reading the project needs a key of 'any' other scope."
            )
        return True


def scope_require(request, scope, *, detail=None):
    """Raise ``ScopeMissing`` unless the request's key holds ``scope`` (checks inside a view)."""
    if not key_has_scope(request.auth, scope):
        raise ScopeMissing(scope, detail=detail)


def request_project(request):
    return request.auth.project
