"""The judge settings page: ``/p/<slug>/settings/judge/``, for the project's admins.

Access is decided by ``web.pages.access.project_page``: not logged in, the login page; not
a member, 404 (the project's existence is not disclosed). Members who are not admins
get 403, for reading too: the page shows where the project's runs are sent. The page
never shows the stored key back, only whether one is set. Saving goes through
``judge_configure``.

"Test connection" (``/p/<slug>/settings/judge/test/``, POST only, the same admins as
saving) makes one real call to the saved judge (``scoring.judge.connection``) and shows
the outcome on the same page: OK with the model's score, reason and elapsed ms, or the
reason it failed and its message. Nothing is stored.
"""

from django.contrib import messages
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from checks.judge.spec import PASS_THRESHOLD
from checks.scorers.registry import AGENT_CHECK_IDS, BUILTIN_IDS
from evalsite.errors import Invalid
from evalsite.models import Role
from scoring.judge.connection import judge_connection_test
from scoring.judge.forms import JudgeConfigForm
from scoring.judge.selectors import judge_config_get
from scoring.judge.services import judge_configure
from web.pages.access import forbidden, page_render, project_page


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
        try:
            judge_configure(project=project, actor=request.user, **form.judge_values())
        except Invalid as exc:  # the form checks the same rules; this is another admin's save in between
            form.add_judge_errors(exc.errors)
        else:
            messages.success(request, "The judge configuration was saved.")
            return redirect("judge-settings", slug=project.slug)
    return _settings_render(request, form, config)


@require_POST
@project_page(change_role=Role.ADMIN)
def judge_test(request, project):
    """One real call to the saved judge; the settings page again, with the outcome."""
    refused = _admins_only(request, project)
    if refused:
        return refused
    config = judge_config_get(project)
    connection = judge_connection_test(config) if config is not None and config.is_configured else None
    return _settings_render(request, JudgeConfigForm(config=config), config, connection=connection)


def _settings_render(request, form, config, connection=None):
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
            "tested": request.method == "POST" and connection is None,
        },
    )
