"""Page: start a scoring pass: choose scorers, their settings and which runs, see how many
runs match and how many it would score, then start it. The request is checked by the same
rules as ``POST /v1/api/passes`` (``scoring.selection.requests``) and started by the same
service (``scoring.passes.services.pass_start``). The form is ``web.pages.pass_form``.

Counting is a read: a viewer counts with a GET form (no CSRF token in the address); a
reviewer's form is a POST whose two buttons count or start.
"""

from django.shortcuts import redirect

from datasets.experiments import experiment_names
from evalsite.errors import DomainError
from scoring.passes.services import pass_start
from scoring.selection.catalog import catalog_for
from scoring.selection.requests import score_request_read, selection_count, selection_matching_count
from web.pages.access import can_curate, page_render, project_page
from web.pages.forms import errors_show
from web.pages.pass_form import SEPARATOR, PassForm


def _request_data(request):
    if request.method == "POST":
        return request.POST
    return request.GET if "scorers" in request.GET else None


@project_page
def pass_new_page(request, project):
    catalog = catalog_for(project)
    form = PassForm(_request_data(request), scorers=catalog.scorers, experiments=experiment_names(project=project))
    counts = None
    if form.is_bound and form.is_valid():
        starting = request.method == "POST" and request.POST.get("action") != "count"
        try:
            if starting:
                scoring_pass = pass_start(project=project, data=form.request_data(), requested_by=request.user)
                return redirect("pass", slug=project.slug, pass_id=scoring_pass.pk)
            checked = score_request_read(project=project, data=form.request_data(), background=True)
            counts = {
                "scored": selection_count(project=project, request=checked),
                "matching": selection_matching_count(project=project, request=checked),
            }
        except DomainError as exc:
            _refusal_show(form, exc)
    context = {"form": form, "counts": counts, "post": can_curate(request)}
    return page_render(request, "scoring/pass_new.html", context, status=400 if form.errors else 200)


def _refusal_show(form, error):
    """The service's refusal on the form, in the page's words: ``config.<scorer>`` is that scorer's settings."""
    rest = []
    for item in error.errors:
        field = item.get("field") or ""
        if not field.startswith("config."):
            rest.append(item)
            continue
        scorer_id = field.removeprefix("config.").split(".", 1)[0]
        required = [n for n in form.settings.get(scorer_id, ()) if "(required)" in str(form.fields[n].label)]
        message = (
            f"{scorer_id} needs its settings: fill in {', '.join(n.split(SEPARATOR, 1)[1] for n in required)}, "
            "or choose runs linked to cases that configure it."
            if required
            else f"The settings of {scorer_id}: {item['message']}"
        )
        form.add_error(required[0] if required else None, message)
    if rest or not error.errors:
        errors_show(form, DomainError(error.detail, errors=rest))
