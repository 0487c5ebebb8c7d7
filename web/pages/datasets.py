"""Curation pages: datasets, a dataset's cases, one case (edit, archive, history), the review queue.

Every change calls the same service as the API (``datasets.cases``, ``datasets.jsonl``);
a service's error comes back next to the field it names, with the reviewer's input kept.
Access (member to read, reviewer to change) is decided by ``web.pages.access``.
"""

from datetime import timedelta

from django.contrib import messages
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from datasets.case_selectors import (
    ALL_STATUSES,
    case_get,
    case_list,
    case_recent_runs,
    case_revisions,
    dataset_get,
    dataset_list,
    review_queue,
)
from datasets.cases import case_archive, case_create, case_restore, case_update, dataset_create
from datasets.jsonl import cases_import
from datasets.models import CaseStatus
from evalsite.errors import DomainError
from evalsite.models import Role
from gating.policies import policy_for
from harvest.selectors import dataset_coverage
from lifecycle.retention import retention_summary
from scoring.review.queue import queue_for_cases
from web.api.datasets import jsonl_download
from web.pages.access import cursor_page, page_render, project_page
from web.pages.case_runs import case_runs
from web.pages.forms import CaseForm, DatasetForm, ImportForm
from web.pages.policy import policy_apply, policy_context, policy_form
from web.pages.quarantine import quarantine_post
from web.pages.refusals import refusal

CASES_PER_PAGE = 100
STATUS_TABS = [CaseStatus.ACTIVE, CaseStatus.DRAFT, CaseStatus.ARCHIVED, ALL_STATUSES]
RECENT_RUNS = 10
COVERAGE_WINDOW = timedelta(days=7)


@project_page
def datasets_page(request, project):
    form = DatasetForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        with refusal(form) as refused:
            dataset = dataset_create(project=project, data=form.dataset_data())
        if not refused:
            messages.success(request, f"Dataset {dataset.name} created. Capture runs into it from the Runs page.")
            return redirect("dataset", slug=project.slug, name=dataset.name)
    return page_render(
        request,
        "datasets/list.html",
        {"datasets": list(dataset_list(project=project)), "form": form, "retention": retention_summary(project)},
        status=400 if form.errors else 200,
    )


@project_page
def dataset_page(request, project, name):
    return dataset_render(request, dataset_get(project=project, name=name))


def dataset_render(request, dataset, *, policy_form=None, status=200):
    """The dataset page: its cases (by status, paged) and its gate policy."""
    dataset = dataset_get(project=dataset.project, name=dataset.name, counted=True)
    case_status = request.GET.get("status") or CaseStatus.ACTIVE
    if case_status not in STATUS_TABS:
        case_status = CaseStatus.ACTIVE
    cases, newer, older = cursor_page(
        request, case_list(dataset=dataset, status=case_status), ordering=("id",), page_size=CASES_PER_PAGE
    )
    context = {
        "dataset": dataset, "cases": cases, "newer": newer, "older": older, "status": case_status,
        "tabs": STATUS_TABS, **policy_context(request, dataset, policy_form),
        "coverage": dataset_coverage(dataset=dataset, window=COVERAGE_WINDOW, uncovered_max=10),
    }  # fmt: skip
    return page_render(request, "datasets/detail.html", context, status=status)


@require_POST
@project_page(change_role=Role.ADMIN)
def dataset_policy(request, project, name):
    dataset = dataset_get(project=project, name=name)
    form = policy_form(policy_for(dataset), request.POST)
    status = policy_apply(request, dataset, form) if form.is_valid() else 400
    if status is not None:
        return dataset_render(request, dataset, policy_form=form, status=status)
    messages.success(request, f"The gate policy of {dataset.name} is now at revision {policy_for(dataset).revision}.")
    return redirect(reverse("dataset", kwargs={"slug": project.slug, "name": dataset.name}) + "#policy")


@project_page
def dataset_export(request, project, name):
    return jsonl_download(dataset_get(project=project, name=name))


@project_page
def dataset_import(request, project, name):
    dataset = dataset_get(project=project, name=name)
    form = ImportForm(request.POST or None, request.FILES or None)
    problems = []
    if request.method == "POST" and form.is_valid():
        try:
            result = cases_import(dataset=dataset, body=form.cleaned_data["file"].read(), by=request.user)
        except DomainError as exc:
            problems = exc.errors
            form.add_error("file", exc.detail)
        else:
            summary = result.as_dict()
            messages.success(
                request,
                f"Imported {summary['created']} new, {summary['updated']} updated, "
                f"{summary['unchanged']} unchanged cases.",
            )
            return redirect("dataset", slug=project.slug, name=dataset.name)
    return page_render(
        request,
        "datasets/import.html",
        {"dataset": dataset, "form": form, "problems": problems},
        status=400 if form.errors else 200,
    )


@project_page
def case_new(request, project, name):
    dataset = dataset_get(project=project, name=name)
    form = CaseForm(request.POST or None, initial={"status": CaseStatus.ACTIVE})
    if request.method == "POST" and form.is_valid():
        data = form.case_data()
        data.pop("version", None)
        with refusal(form) as refused:
            case = case_create(dataset=dataset, data=data, by=request.user)
        if not refused:
            messages.success(request, f"Case {case.name} created.")
            return redirect("case", slug=project.slug, case_id=case.pk)
    return page_render(
        request, "datasets/case_new.html", {"dataset": dataset, "form": form}, status=400 if form.errors else 200
    )


@project_page
def case_page(request, project, case_id):
    case = case_get(project=project, case_id=case_id)
    form = CaseForm(initial=CaseForm.initial_for(case))
    if request.method == "POST":
        action = request.POST.get("action", "save")
        if action in ("archive", "restore"):
            change = case_archive if action == "archive" else case_restore
            with refusal(request=request, prefix=f"Case {case.name} was not {action}d: ") as refused:
                case, changed = change(case=case, by=request.user)
            if not refused and changed:
                messages.success(request, f"Case {case.name} {'archived' if action == 'archive' else 'restored'}.")
            return redirect("case", slug=project.slug, case_id=case.pk)
        if action in ("quarantine", "release"):
            return quarantine_post(request, case, action == "quarantine")
        form = CaseForm(request.POST)
        if form.is_valid():
            with refusal(form) as refused:
                case, changed = case_update(case=case, data=form.case_data(), by=request.user)
            if not refused:
                messages.success(
                    request,
                    f"Case {case.name} saved as version {case.version}."
                    if changed
                    else f"Nothing changed in case {case.name}.",
                )
                return redirect("case", slug=project.slug, case_id=case.pk)
    return page_render(
        request,
        "datasets/case.html",
        {
            "case": case,
            "form": form,
            "revisions": list(case_revisions(case=case)),
            "gated": case_runs(project=project, case=case),
            "runs": case_recent_runs(case=case, limit=RECENT_RUNS),
        },
        status=400 if form.errors else 200,
    )


@project_page
def review_page(request, project):
    """The cases needing an expected answer, filterable by dataset; a button works them in the annotation queue."""
    datasets = list(dataset_list(project=project, include_archived=False))
    chosen = next((d for d in datasets if d.name == request.GET.get("dataset")), None)
    if request.method == "POST":
        chosen = next((d for d in datasets if d.name == request.POST.get("dataset")), None)
        queue = queue_for_cases(project=project, dataset=chosen)
        return redirect("queue", slug=project.slug, queue_id=queue.pk)
    cases, newer, older = cursor_page(
        request, review_queue(project=project, dataset=chosen), ordering=("id",), page_size=CASES_PER_PAGE
    )
    return page_render(
        request,
        "datasets/review.html",
        {"cases": cases, "newer": newer, "older": older, "datasets": datasets, "chosen": chosen},
    )
