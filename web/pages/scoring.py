"""Scoring pages: passes with a live progress bar, and the review queue of abstentions and skips.

Access is decided by ``web.pages.access`` (members read; reviewers and admins act). Reads
go through ``scoring.selectors`` and writes through ``scoring.passes.rescore``, the same as the
API and the admin. The pass page works without JavaScript (it shows the numbers of the
moment, and refreshes itself while the pass runs); with it, a small script polls
``progress.json`` and moves the bar.
"""

import json

from django import forms
from django.contrib import messages
from django.http import JsonResponse
from django.shortcuts import redirect
from django.utils.dateparse import parse_datetime

from scoring.models import AbstentionKind
from scoring.passes.rescore import abstentions_mark_reviewed, abstentions_rescore
from scoring.selection.catalog import catalog_for
from scoring.selectors import (
    abstention_filter_choices,
    abstentions_for_review,
    abstentions_of_project,
    pass_get,
    pass_list,
)
from web.api.scoring import pass_detail_as_dict
from web.pages.access import cursor_page, page_render, project_page

PASSES_PER_PAGE = 30
ABSTENTIONS_PER_PAGE = 50
# Seconds between two refreshes of a running pass's page, without JavaScript.
REFRESH_SECONDS = 5


@project_page
def pass_list_page(request, project):
    passes, newer, older = cursor_page(
        request, pass_list(project=project), ordering=("-created_at", "-id"), page_size=PASSES_PER_PAGE
    )
    return page_render(request, "scoring/passes.html", {"passes": passes, "newer": newer, "older": older})


@project_page
def pass_page(request, project, pass_id):
    scoring_pass = pass_get(project=project, pass_id=pass_id)
    detail = pass_detail_as_dict(scoring_pass)
    return page_render(
        request,
        "scoring/pass.html",
        {
            "scoring_pass": scoring_pass,
            "detail": detail,
            "percent": round(100 * scoring_pass.progress),
            "refresh_seconds": None if scoring_pass.finished else REFRESH_SECONDS,
            "selection_text": _selection_text(scoring_pass.selection),
            "settings": _settings(scoring_pass.config),
        },
    )


def _settings(config):
    """A pass's config as ``[(scorer, [(setting, value as compact JSON)])]``, for a reader."""
    return [
        (scorer, [(key, json.dumps(value, ensure_ascii=False)) for key, value in (settings or {}).items()])
        for scorer, settings in sorted((config or {}).items())
    ]


def _selection_text(selection):
    if "trace_ids" in selection:
        count = len(selection["trace_ids"])
        return f"{count} run{'s' if count != 1 else ''} named by trace id"
    text = f"the {selection.get('limit')} most recent runs"
    if selection.get("from"):
        text += f" started at or after {_when(selection['from'])}"
    if selection.get("experiment"):
        text += f" of experiment {selection['experiment']}"
    if selection.get("until"):
        text += f", among those stored by {_when(selection['until'])}"
    return text


def _when(iso):
    moment = parse_datetime(iso)
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC") if moment else iso


@project_page
def pass_progress(request, project, pass_id):
    """The numbers the pass page's progress bar shows, for its script to poll."""
    scoring_pass = pass_get(project=project, pass_id=pass_id)
    return JsonResponse(
        {
            "status": scoring_pass.status,
            "finished": scoring_pass.finished,
            "total": scoring_pass.total,
            "done": scoring_pass.done,
            "progress": round(scoring_pass.progress, 4),
            "percent": round(100 * scoring_pass.progress),
            "written": scoring_pass.written,
            "skipped": scoring_pass.skipped,
            "existing": scoring_pass.existing,
            "error": scoring_pass.error,
        }
    )


class ReviewFilterForm(forms.Form):
    scorer = forms.ChoiceField(required=False)
    reason = forms.ChoiceField(required=False)
    kind = forms.ChoiceField(required=False, choices=[("", "any"), *AbstentionKind.choices])
    unreviewed = forms.BooleanField(required=False, label="Not reviewed yet")

    def __init__(self, data, *, scorers, reasons):
        super().__init__(data)
        self.fields["scorer"].choices = [("", "any"), *((s, s) for s in scorers)]
        self.fields["reason"].choices = [("", "any"), *((r, r) for r in reasons)]

    def filters(self):
        if not self.is_valid():
            return {}
        return {key: value for key, value in self.cleaned_data.items() if value}


@project_page
def review_page(request, project):
    """Abstentions and skips of the project, filterable; reviewers re-score or mark them reviewed."""
    if request.method == "POST":
        chosen = abstentions_of_project(project=project, ids=_ids(request.POST.getlist("ids")))
        action = request.POST.get("action")
        if not chosen:
            messages.error(request, "Select at least one row.")
        elif action == "rescore":
            started, problems = abstentions_rescore(abstentions=chosen, requested_by=request.user)
            for problem in problems:
                messages.error(request, f"Not re-scored: {problem}")
            if started:
                messages.success(
                    request, f"Started {len(started)} pass{'es' if len(started) > 1 else ''} over the selected runs."
                )
                return redirect("pass", slug=project.slug, pass_id=started[0].pk)
        elif action == "reviewed":
            count = abstentions_mark_reviewed(abstentions=chosen, user=request.user)
            messages.success(request, f"{count} marked reviewed.")
        return redirect(request.get_full_path())

    scorers, reasons = abstention_filter_choices(project=project)
    scorers = list(dict.fromkeys([*catalog_for(project).scorers, *scorers]))
    filters = ReviewFilterForm(request.GET or None, scorers=scorers, reasons=reasons)
    rows = abstentions_for_review(project=project, **filters.filters())
    abstentions, newer, older = cursor_page(
        request, rows, ordering=("-created_at", "-id"), page_size=ABSTENTIONS_PER_PAGE
    )
    return page_render(
        request,
        "scoring/review.html",
        {"filters": filters, "abstentions": abstentions, "newer": newer, "older": older},
    )


def _ids(values):
    return [int(v) for v in values if str(v).isdigit()]
