"""The judge settings page: ``/p/<slug>/settings/judge/``, for the project's admins.

Access is decided by ``web.pages.access.project_page``: not logged in, the login page; not
a member, 404 (the project's existence is not disclosed). Members who are not admins
get 403, for reading too: the page shows where the project's runs are sent. The page
never shows the stored key back, only whether one is set. Saving goes through
``judge_configure``.

"Test connection" (``/p/<slug>/settings/judge/test/``, POST only, the same admins as
saving) makes one real call to the saved judge (``scoring.judge.connection``), then
redirects to the settings page, which shows the outcome once: OK with the model's
score, reason and elapsed ms, or the reason it failed and its message. The outcome
waits in the session for that one page; reloading it calls nothing again.
"""

import dataclasses

from django.contrib import messages
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from checks.judge.spec import PASS_THRESHOLD
from checks.scorers.registry import AGENT_CHECK_IDS, BUILTIN_IDS
from evalsite.models import Role
from scoring.judge.connection import ConnectionTest, judge_connection_test
from scoring.judge.forms import JudgeConfigForm
from scoring.judge.selectors import judge_config_get
from scoring.judge.services import judge_configure
from web.pages.access import forbidden, page_render, project_page
from web.pages.refusals import refusal


def _admins_only(request, project):
    if not request.membership.allows(Role.ADMIN):
        return forbidden(request, f"Only the admins of {project.name} may see or change its judge.")
    return None


@project_page(change_role=Role.ADMIN)
def judge_settings(request, project):
    refused = _admins_only(request, project)
    if refused:
        return refused
    config = judge_config_get(project)
    form = JudgeConfigForm(request.POST or None, config=config)
    if request.method == "POST" and form.is_valid():
        # The form checks the same rules: a refusal here is another admin's save in between.
        with refusal(form, fields=form.error_fields) as refused:
            judge_configure(project=project, actor=request.user, **form.judge_values())
        if not refused:
            messages.success(request, "The judge configuration was saved.")
            return redirect("judge-settings", slug=project.slug)
    tested = request.session.pop(_tested_key(project), None) if request.method == "GET" else None
    connection = _connection_from(tested["connection"]) if tested and tested["connection"] else None
    return _settings_render(request, form, config, connection=connection, tested=tested is not None)


def _connection_from(stored):
    # Only the fields ConnectionTest has now: an outcome stored by an older release may carry more.
    names = {f.name for f in dataclasses.fields(ConnectionTest)}
    return ConnectionTest(**{k: v for k, v in stored.items() if k in names})


def _tested_key(project):
    return f"judge_connection_tested:{project.pk}"


@require_POST
@project_page(change_role=Role.ADMIN)
def judge_test(request, project):
    """One real call to the saved judge; then the settings page, which shows the outcome."""
    refused = _admins_only(request, project)
    if refused:
        return refused
    config = judge_config_get(project)
    connection = judge_connection_test(config) if config is not None and config.is_configured else None
    request.session[_tested_key(project)] = {"connection": dataclasses.asdict(connection) if connection else None}
    return redirect("judge-settings", slug=project.slug)


def _settings_render(request, form, config, *, connection=None, tested=False):
    return page_render(
        request,
        "judge/settings.html",
        {
            "form": form,
            "config": config,
            "has_api_key": bool(config and config.api_key),
            "is_configured": bool(config and config.is_configured),
            "builtin_ids": (*BUILTIN_IDS, *AGENT_CHECK_IDS),
            "pass_threshold": PASS_THRESHOLD,
            "connection": connection,
            "tested": tested and connection is None,
        },
    )
