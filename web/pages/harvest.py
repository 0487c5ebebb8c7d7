"""Harvest's pages: production failures grouped (biggest first, uncovered marked, filters by
window, signature and scorer), and a group with its runs, from which reviewers capture a
representative run as a case (the capture's reference guard applies: the form asks for
the corrected answer) or open the whole group as an annotation queue. Viewers read."""

from django import forms
from django.core.paginator import Paginator
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from datasets.case_selectors import dataset_list
from evalsite.errors import DomainError
from harvest.selectors import (
    group_get,
    group_list,
    group_run_ids,
    group_runs,
    groups_covered,
    representatives_of,
    window_parse,
)
from scoring.review.queue import queue_for_runs
from web.pages.access import page_links, page_render, project_page
from web.pages.capture_report import capture_into, capture_report
from web.pages.forms import CaptureForm

GROUPS_PER_PAGE = 50
RUNS_SHOWN = 100
QUEUE_RUNS_MAX = 5000
WINDOWS = [("24h", "last 24 hours"), ("7d", "last 7 days"), ("30d", "last 30 days"), ("90d", "last 90 days")]


class HarvestFilterForm(forms.Form):
    window = forms.ChoiceField(choices=WINDOWS, required=False, initial="7d")
    signature = forms.CharField(required=False, max_length=500)
    scorer = forms.CharField(required=False, max_length=120, label="Failed check")


class GroupCaptureForm(CaptureForm):
    """Capture one of the group's representative runs (the run page's capture form, with the run to take)."""

    trace_id = forms.ChoiceField(label="Run")

    def __init__(self, *args, runs=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["trace_id"].choices = [(r.trace_id, r.trace_id) for r in runs]
        self.order_fields(["trace_id"])
        self.fields[
            "expected_output"
        ].help_text = "The corrected answer: the run failed, so its own answer is not taken as the reference."


def _window(request):
    text = request.GET.get("window") or "7d"
    try:
        return text, window_parse(text)
    except DomainError:
        return "7d", window_parse("7d")


@project_page
def harvest_page(request, project):
    form = HarvestFilterForm(request.GET or None)
    data = form.cleaned_data if form.is_valid() else {}
    window_text, window = _window(request)
    groups = group_list(project=project, window=window, signature=data.get("signature", ""),
                        scorer=data.get("scorer", "").strip())  # fmt: skip
    page = Paginator(groups, GROUPS_PER_PAGE).get_page(request.GET.get("page"))
    covered = groups_covered(project=project, groups=page.object_list)
    for group in page.object_list:
        group.covered_by = covered.get(group.pk)
        group.trend = group.window_size - group.previous_size
    previous, following = page_links(request, page)
    context = {"form": form, "page": page, "groups": page.object_list, "window": window_text,
               "previous": previous, "next": following}  # fmt: skip
    return page_render(request, "harvest/groups.html", context)


@project_page
def group_page(request, project, group_id):
    window_text, window = _window(request)
    group = group_get(project=project, group_id=group_id, window=window)
    representatives = [r for pk, r in representatives_of([group]).items() if pk in group.representatives]
    datasets = list(dataset_list(project=project, include_archived=False))
    posted = request.POST if request.method == "POST" else None
    capture = GroupCaptureForm(posted, datasets=datasets, runs=representatives,
                               initial={"expected_output_format": "text"})  # fmt: skip
    if posted is not None and capture.is_valid():
        trace_id = capture.cleaned_data["trace_id"]
        done = capture_into(project=project, form=capture, data=capture.capture_data(trace_id), by=request.user)
        if done is not None:
            capture_report(request, capture, *done)
            return redirect("harvest-group", slug=project.slug, group_id=group.pk)
    covered = groups_covered(project=project, groups=[group])
    context = {
        "group": group, "window": window_text, "covered_by": covered.get(group.pk),
        "trend": group.window_size - group.previous_size, "representatives": representatives,
        "runs": group_runs(group, window=window)[:RUNS_SHOWN], "capture": capture, "datasets": datasets,
    }  # fmt: skip
    return page_render(request, "harvest/group.html", context, status=400 if capture.errors else 200)


@require_POST
@project_page
def group_queue(request, project, group_id):
    """Reviewers open the group's runs of the window as a queue (created once per group and window)."""
    window_text, window = _window(request)
    group = group_get(project=project, group_id=group_id, window=window)
    run_ids = group_run_ids(group, window=window, limit=QUEUE_RUNS_MAX)
    name = f"Failure group {group.pk} ({window_text}): {group.label or group.signature}"
    queue = queue_for_runs(project=project, name=name, run_ids=run_ids, by=request.user)
    return redirect("queue", slug=project.slug, queue_id=queue.pk)
