"""Who may open and change project pages: decided here, once, for every page.

Pages live under ``/p/<slug>/``. A page needs a logged-in user (else the login page)
who is a member of that project; anyone else gets 404, the same answer as a project
that does not exist, so a page never discloses what it does not show. Viewers read
everything. A request that changes something (any method but GET/HEAD/OPTIONS) needs
the page's role, reviewer by default, or gets 403: hiding a form is a courtesy, this
check is the rule. The project a user last opened is kept in the session, for the home
page and the project switcher.
"""

from functools import wraps
from urllib.parse import urlsplit

from django.contrib.auth.decorators import login_required
from django.core.exceptions import BadRequest
from django.http import Http404
from django.shortcuts import render
from rest_framework.request import Request

from evalsite.errors import Invalid, NotFound
from evalsite.models import Role
from evalsite.selectors import membership_find, memberships_of
from web.api.rest import CheckedCursorPagination

CURRENT_PROJECT_SESSION_KEY = "evalsite_project"
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")


def membership_get(user, slug):
    """The user's membership of project ``slug``; ``Http404`` when there is none."""
    membership = membership_find(user=user, slug=slug)
    if membership is None:
        raise Http404("No such project.")
    return membership


def project_page(view=None, *, change_role=Role.REVIEWER):
    """Decorate a page ``view(request, project, *args, **kwargs)`` served at ``/p/<slug>/...``.

    Sets ``request.project`` and ``request.membership``.
    """

    def decorator(view):
        @login_required
        @wraps(view)
        def wrapped(request, slug, *args, **kwargs):
            membership = membership_get(request.user, slug)
            request.project = membership.project
            request.membership = membership
            if request.method not in SAFE_METHODS and not membership.allows(change_role):
                return forbidden(request, f"Your role in {membership.project.name} ({membership.role}) cannot do this.")
            if request.session.get(CURRENT_PROJECT_SESSION_KEY) != slug:
                request.session[CURRENT_PROJECT_SESSION_KEY] = slug
            try:
                return view(request, membership.project, *args, **kwargs)
            except NotFound as exc:
                # The selectors' "missing or not yours" is the same 404 page as a wrong URL.
                raise Http404(exc.detail) from None

        return wrapped

    return decorator(view) if view is not None else decorator


def can_curate(request):
    return request.membership.allows(Role.REVIEWER)


def page_render(request, template, context=None, *, status=200):
    """Render a project page with what the layout needs: the project, the role, the switcher."""
    memberships = memberships_of(user=request.user)
    base = {
        "project": request.project,
        "membership": request.membership,
        "can_curate": can_curate(request),
        "switcher_memberships": memberships,
    }
    return render(request, template, {**base, **(context or {})}, status=status)


def forbidden(request, reason):
    return render(request, "403.html", {"reason": reason}, status=403)


class _PagePagination(CheckedCursorPagination):
    page_size_query_param = None


def cursor_page(request, queryset, *, ordering, page_size=50):
    """One page of ``queryset`` for a page: ``(items, newer_url, older_url)``.

    Cursor pages (as in the API) stay stable while rows are added; the links keep the
    page's other query parameters (its filters).
    """
    paginator = _PagePagination()
    paginator.ordering = ordering
    paginator.page_size = page_size
    try:
        items = paginator.paginate_queryset(queryset, Request(request))
    except Invalid:
        raise BadRequest("This page link is not one this list gave.") from None
    return items, _relative(paginator.get_previous_link()), _relative(paginator.get_next_link())


def _relative(url):
    if not url:
        return None
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


def page_links(request, page):
    """``(previous url, next url)`` of a numbered page, keeping the page's other parameters."""

    def link(number):
        query = request.GET.copy()
        query["page"] = number
        return f"?{query.urlencode()}"

    return (
        link(page.previous_page_number()) if page.has_previous() else None,
        link(page.next_page_number()) if page.has_next() else None,
    )
