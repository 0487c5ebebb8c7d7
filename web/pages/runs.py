"""Runs pages: the filterable runs list (capture several at once) and one run (capture it).

Reads go through the same selectors as the API, writes through the same services
(``datasets.capture``, ``datasets.cases``); access is decided by ``web.pages.access``.
"""

from django.core.paginator import Paginator
from django.shortcuts import redirect

from datasets.case_selectors import cases_from_run, dataset_list
from datasets.run_selectors import spans_in_tree_order, trace_captured_annotate, trace_get
from scoring.feedback import run_feedback
from scoring.labels import label_config_list
from scoring.models import ScoreSource
from scoring.selection.catalog import catalog_for
from scoring.selectors import (
    RUN_SORTS,
    run_ids_oldest_first,
    run_scores,
    runs_annotate_score_counts,
    runs_annotate_scores,
    runs_list,
    runs_sorted,
)
from web.pages.access import cursor_page, page_links, page_render, project_page
from web.pages.capture_report import capture_into, capture_report
from web.pages.forms import BulkCaptureForm, CaptureForm, RunFilterForm
from web.pages.label_forms import LabelForm
from web.pages.labels import run_label_post
from web.pages.queue import queue_after_capture
from web.pages.timeline import abstentions_once, run_verdict, span_timeline

RUNS_PER_PAGE = 50
# "Select all N runs matching this filter" captures in one request and one transaction;
# a filter matching more is answered with a message to narrow it, and nothing is written.
ALL_MATCHING_MAX = 5000


# The runs list's sort orders: the newest first pages by cursor (stable while runs
# arrive); the others by page number, over the filtered runs.
SORTS = RUN_SORTS


def runs_page(request, traces, sort):
    """``(runs, newer url, older url, page or None)`` of the runs list in ``sort`` order."""
    if sort == "started":
        return (*cursor_page(request, traces, ordering=SORTS[sort], page_size=RUNS_PER_PAGE), None)
    page = Paginator(runs_sorted(traces, sort), RUNS_PER_PAGE).get_page(request.GET.get("page"))
    return (list(page.object_list), *page_links(request, page), page)


@project_page
def run_list(request, project):
    filters = RunFilterForm(request.GET or None, scorer_ids=list(catalog_for(project).scorers))
    matching = runs_list(project=project, **filters.filters())
    traces = trace_captured_annotate(runs_annotate_score_counts(runs_annotate_scores(matching)))
    sort = request.GET.get("sort") if request.GET.get("sort") in SORTS else "started"
    datasets = list(dataset_list(project=project, include_archived=False))
    capture = BulkCaptureForm(request.POST or None, datasets=datasets)
    if request.method == "POST" and capture.is_valid():
        done, matched = _capture_posted(request, project, capture, filters, matching)
        if done is not None:
            capture_report(request, capture, *done, matching=matched)
            if not done[1]:  # every run skipped: back to the same list, the report on top
                return redirect(request.get_full_path())
            return redirect("dataset", slug=project.slug, name=done[0].name)
    runs, newer, older, page = runs_page(request, traces, sort)
    return page_render(
        request,
        "runs/list.html",
        {
            "filters": filters,
            "filtered": any(v for v in filters.filters().values()),
            "runs": runs,
            "total": matching.count(),
            "sort": sort,
            "sorts": [(name, _sort_link(request, name)) for name in SORTS],
            "page": page,
            "newer": newer,
            "older": older,
            "capture": capture,
            "selected": set(request.POST.getlist("trace_ids")),
            "all_matching_max": ALL_MATCHING_MAX,
            "datasets": datasets,
        },
        status=400 if capture.errors else 200,
    )


def _capture_posted(request, project, capture, filters, matching):
    """``(capture_into's answer, how many runs matched or None)`` for the runs list's capture form.

    Without ``all_matching``: the ticked runs. With it: every run the list's filter matches,
    up to ``ALL_MATCHING_MAX``. The filter is the list's own query parameters, on the URL the
    form posts to, read again by ``RunFilterForm`` here: the ids ticked on the page are not
    trusted to stand for the rest.
    """
    if not capture.cleaned_data["all_matching"]:
        data = capture.capture_data()
        return capture_into(project=project, form=capture, data=data, by=request.user, skip_failing=True), None
    if filters.is_bound and not filters.is_valid():
        capture.add_error(None, "The filter has an error: correct it before capturing every run it matches.")
        return None, None
    trace_ids = run_ids_oldest_first(matching, limit=ALL_MATCHING_MAX + 1)
    if len(trace_ids) > ALL_MATCHING_MAX:
        capture.add_error(
            None,
            f"{matching.count():,} runs match this filter, and at most {ALL_MATCHING_MAX:,} can be captured at "
            "once. Nothing was captured: narrow the filter (an experiment, a time range) and capture each part.",
        )
        return None, None
    if not trace_ids:
        capture.add_error(None, "No run matches this filter any more: nothing was captured.")
        return None, None
    data = {**capture.capture_data(), "trace_ids": trace_ids}
    done = capture_into(
        project=project, form=capture, data=data, by=request.user, max_runs=ALL_MATCHING_MAX, skip_failing=True
    )
    return done, len(trace_ids)


def _sort_link(request, sort):
    query = request.GET.copy()
    query.pop("cursor", None)
    query.pop("page", None)
    query["sort"] = sort
    return f"?{query.urlencode()}"


@project_page
def run_detail(request, project, trace_id):
    trace = trace_get(project=project, trace_id=trace_id)
    labelling = request.method == "POST" and request.POST.get("action") == "label"
    label_form = None
    if labelling:
        label_form, done = run_label_post(request, project, trace)
        if done:
            return redirect("run", slug=project.slug, trace_id=trace.trace_id)
    datasets = list(dataset_list(project=project, include_archived=False))
    posted = request.POST if request.method == "POST" and not labelling else None
    capture = CaptureForm(posted, datasets=datasets, initial={"expected_output_format": "text"})
    if posted is not None and capture.is_valid():
        done = capture_into(project=project, form=capture, data=capture.capture_data(trace.trace_id), by=request.user)
        if done is not None:
            capture_report(request, capture, *done)
            if request.GET.get("queue"):
                return queue_after_capture(request, project, trace, request.GET["queue"])
            return redirect("run", slug=project.slug, trace_id=trace.trace_id)
    scores, abstentions = run_scores(trace)
    spans = spans_in_tree_order(trace)
    checks = [s for s in scores if s.source not in (ScoreSource.HUMAN, ScoreSource.FEEDBACK)]
    verdict, verdict_tone, failed_checks = run_verdict(checks)
    return page_render(
        request,
        "runs/detail.html",
        {
            "trace": trace,
            "spans": spans,
            "timeline": span_timeline(spans),
            "verdict": verdict,
            "verdict_tone": verdict_tone,
            "failed_checks": failed_checks,
            "scores": checks,
            "labels": [s for s in scores if s.source == ScoreSource.HUMAN],
            "feedback": run_feedback(trace),
            "label_form": _label_form(request, project, scores) if label_form is None else label_form,
            "abstentions": abstentions_once(abstentions),
            "cases": list(cases_from_run(project=project, trace_id=trace.trace_id)),
            "capture": capture,
            "datasets": datasets,
        },
        status=400 if capture.errors or (label_form is not None and label_form.errors) else 200,
    )


def _label_form(request, project, scores):
    """The run page's label form, with the reviewer's own current labels checked."""
    mine = LabelForm.current_of(scores, request.user.get_username())
    return LabelForm(configs=label_config_list(project=project, include_archived=False), current=mine)
