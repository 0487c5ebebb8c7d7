"""The project settings page (``/p/<slug>/settings/``): keys, members, invitations, quota, audit.

Admins only, for reading too (403 for viewers and reviewers; 404 for outsiders, as on
every page): it lists who may write to the project. Each form posts to its own URL
and calls one service of ``evalsite.team``, which writes the audit entry. A new key
and a new invitation link are in the answer to the POST that made them, once; they are
never stored and never shown again. A bad form answers the page again with the error
(400, or 409 for a conflict such as removing the last admin).

The invitation link (``/invite/<token>/``) works without e-mail: the admin copies it.
Whoever opens it logs in, or creates an account there, and joins with the invited role.
"""

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.forms import UserCreationForm
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from evalsite import team
from evalsite.errors import Invalid, NotFound
from evalsite.models import Role
from evalsite.scopes import DEFAULT_SCOPES, SCOPE_HELP
from evalsite.selectors import team_of
from lifecycle.exports import exports_recent
from lifecycle.retention import retention_summary
from web.pages.access import forbidden, page_render, project_page
from web.pages.refusals import refusal

AUDIT_SHOWN = 100


def admin_page(view):
    """``project_page`` for admins only, reads included."""

    @project_page(change_role=Role.ADMIN)
    def wrapped(request, project, *args, **kwargs):
        if not request.membership.allows(Role.ADMIN):
            return forbidden(request, f"Only the admins of {project.name} may see or change its settings.")
        return view(request, project, *args, **kwargs)

    return wrapped


def _settings_render(request, project, *, status=200, **extra):
    context = {
        **team_of(project=project, audit_shown=AUDIT_SHOWN),
        "roles": Role.values,
        "scope_choices": list(SCOPE_HELP.items()),
        "default_scopes": DEFAULT_SCOPES,
        "retention": retention_summary(project),
        "exports": exports_recent(project=project),
        "export_retention_hours": settings.EVALSITE_EXPORT_RETENTION_HOURS,
        **extra,
    }
    return page_render(request, "team/settings.html", context, status=status)


def _change(request, project, change, success):
    """Run ``change()``; on success redirect with ``success``, else the page with the error."""
    with refusal(request=request) as refused:
        result = change()
    if refused:
        return _settings_render(request, project, status=refused.error.status)
    messages.success(request, success(result) if callable(success) else success)
    return redirect("project-settings", slug=project.slug)


@admin_page
def settings_page(request, project):
    return _settings_render(request, project)


@require_POST
@admin_page
def key_create(request, project):
    with refusal(request=request) as refused:
        key, full_key = team.key_issue(
            project=project, actor=request.user, name=request.POST.get("name"), scopes=request.POST.getlist("scopes")
        )
    if refused:
        return _settings_render(request, project, status=refused.error.status)
    return _settings_render(request, project, status=201, new_key=full_key, new_key_name=key.name)


@require_POST
@admin_page
def key_revoke(request, project, key_id):
    key = team.key_withdraw(project=project, actor=request.user, key_id=key_id)
    messages.success(request, f"API key {key.name!r} is revoked.")
    return redirect("project-settings", slug=project.slug)


@require_POST
@admin_page
def member_add(request, project):
    post = request.POST
    return _change(
        request, project,
        lambda: team.member_add(project=project, actor=request.user, who=post.get("user"), role=post.get("role")),
        lambda m: f"{m.user.get_username()} is now a member ({m.role}).",
    )  # fmt: skip


@require_POST
@admin_page
def member_update(request, project, membership_id):
    if request.POST.get("action") == "remove":
        change = lambda: team.member_remove(project=project, actor=request.user, membership_id=membership_id)  # noqa: E731
        return _change(request, project, change, "The member was removed.")
    role = request.POST.get("role")
    change = lambda: team.member_role_change(  # noqa: E731
        project=project, actor=request.user, membership_id=membership_id, role=role
    )
    return _change(request, project, change, lambda m: f"{m.user.get_username()} is now {m.role}.")


@require_POST
@admin_page
def invitation_create(request, project):
    post = request.POST
    with refusal(request=request) as refused:
        invitation, token = team.invitation_create(
            project=project, actor=request.user, email=post.get("email"), role=post.get("role")
        )
    if refused:
        return _settings_render(request, project, status=refused.error.status)
    link = request.build_absolute_uri(reverse("invitation", args=[token]))
    return _settings_render(request, project, status=201, invite_link=link, invite=invitation)


@require_POST
@admin_page
def invitation_revoke(request, project, invitation_id):
    team.invitation_withdraw(project=project, actor=request.user, invitation_id=invitation_id)
    messages.success(request, "The invitation was withdrawn.")
    return redirect("project-settings", slug=project.slug)


@require_POST
@admin_page
def quota_update(request, project):
    value = request.POST.get("quota_per_minute")
    change = lambda: team.quota_set(project=project, actor=request.user, quota_per_minute=value)  # noqa: E731
    return _change(request, project, change, "The quota was saved.")


@require_POST
@admin_page
def retention_update(request, project):
    value = request.POST.get("retention_days")
    change = lambda: team.retention_set(project=project, actor=request.user, retention_days=value)  # noqa: E731
    return _change(request, project, change, "The retention was saved.")


@require_POST
@admin_page
def feedback_origins_update(request, project):
    value = request.POST.get("feedback_origins")
    change = lambda: team.feedback_origins_set(project=project, actor=request.user, origins=value)  # noqa: E731
    return _change(request, project, change, "The feedback origins were saved.")


def invitation_page(request, token):
    """Open a one-time link: accept it (logged in) or create an account and accept it."""
    try:
        invitation = team.invitation_open(token)
    except NotFound as exc:
        return _link_dead(request, exc)
    signup = None
    if request.method == "POST":
        try:
            membership = None
            if request.user.is_authenticated:
                membership = team.invitation_accept(token=token, user=request.user)
            else:
                signup = UserCreationForm(request.POST)
                if signup.is_valid():
                    user, membership = team.invitation_signup(
                        token=token,
                        username=signup.cleaned_data["username"],
                        password=signup.cleaned_data["password1"],
                    )
                    login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        except NotFound as exc:
            return _link_dead(request, exc)
        except Invalid as exc:
            for error in exc.errors:
                signup.add_error(error["field"], error["message"])
        if membership is not None:
            messages.success(request, f"You joined {membership.project.name} as {membership.role}.")
            return redirect("project-home", slug=membership.project.slug)
    elif not request.user.is_authenticated:
        signup = UserCreationForm()
    status = 400 if signup is not None and signup.errors else 200
    return render(request, "team/invitation.html", {"invitation": invitation, "signup": signup}, status=status)


def _link_dead(request, exc):
    return render(request, "404.html", {"detail": exc.detail}, status=404)
