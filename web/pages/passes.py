"""Page: start a scoring pass: choose scorers and which runs, see how many runs it would
score, then start it. The request is checked by the same rules as ``POST /v1/api/passes``
(``scoring.selection.requests``) and started by the same service (``scoring.passes.services.pass_start``).
"""

from django import forms
from django.shortcuts import redirect

from datasets.experiments import experiment_names
from scoring.passes.services import pass_start
from scoring.selection.catalog import catalog_for
from scoring.selection.requests import score_request_read, selection_count
from web.pages.access import page_render, project_page
from web.pages.refusals import refusal


class PassForm(forms.Form):
    scorers = forms.MultipleChoiceField(widget=forms.CheckboxSelectMultiple, label="Scorers")
    experiment = forms.ChoiceField(required=False, label="Runs of experiment")
    since = forms.DateTimeField(
        required=False, label="Started from", widget=forms.DateTimeInput(attrs={"type": "datetime-local"})
    )
    limit = forms.IntegerField(
        required=False, min_value=1, label="At most", help_text="The newest runs first; empty: the default limit."
    )

    def __init__(self, data, *, scorer_ids, experiments):
        super().__init__(data)
        self.fields["scorers"].choices = [(s, s) for s in scorer_ids]
        self.fields["experiment"].choices = [("", "any experiment"), *((e, e) for e in experiments)]

    def request_data(self):
        """The body a ``POST /v1/api/passes`` would carry."""
        d = self.cleaned_data
        data = {"scorers": d["scorers"]}
        for key, value in (("experiment", d["experiment"]), ("from", d["since"]), ("limit", d["limit"])):
            if value not in (None, ""):
                data[key] = value
        return data


@project_page
def pass_new_page(request, project):
    catalog = catalog_for(project)
    experiments = experiment_names(project=project)
    data = request.POST if request.method == "POST" else (request.GET if "scorers" in request.GET else None)
    form = PassForm(data, scorer_ids=list(catalog.scorers), experiments=experiments)
    count = None
    if form.is_bound and form.is_valid():
        with refusal(form):
            if request.method == "POST":
                scoring_pass = pass_start(project=project, data=form.request_data(), requested_by=request.user)
                return redirect("pass", slug=project.slug, pass_id=scoring_pass.pk)
            checked = score_request_read(project=project, data=form.request_data(), background=True)
            count = selection_count(project=project, request=checked)
    return page_render(
        request, "scoring/pass_new.html", {"form": form, "count": count}, status=400 if form.errors else 200
    )
