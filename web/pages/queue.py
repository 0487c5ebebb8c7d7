"""The annotation queue's pages: the saved filters, and one item at a time.

``queue/``: the project's queues with their progress, and a form to save a new filter.
``queue/<id>/``: takes the next item for the reviewer (a lease, ``scoring.review.queue``) and
sends them to it; a viewer is shown the next open item without taking it.
``queue/<id>/items/<item>/``: one run (its question, answer, tool calls, expected answer
beside the actual one, scores and label controls) or one case (its expected answer to
write). Every action is a plain form (label, skip, save the expected answer); the keys
of ``queue.js`` only press those forms' buttons.
"""

from django.contrib import messages
from django.shortcuts import redirect

from datasets.cases import case_update
from datasets.run_selectors import spans_in_tree_order
from evalsite.errors import DomainError
from scoring.labels import label_config_list
from scoring.models import QueueFilter, ScoreSource
from scoring.review.assignment import (
    is_team_queue,
    queue_label,
    queue_may_review,
    queue_team_create,
    review_record,
    team_next,
)
from scoring.review.queue import (
    Outcome,
    queue_claim,
    queue_claim_next,
    queue_filter_get,
    queue_filter_list,
    queue_first_open,
    queue_for_cases,
    queue_item_finish,
    queue_item_holder,
    queue_item_load,
    queue_item_state,
    queue_previous,
    queue_progress,
)
from scoring.selectors import run_scores
from web.pages.access import can_curate, page_render, project_page
from web.pages.diffs import value_diff
from web.pages.forms import CaseForm
from web.pages.label_forms import LabelForm
from web.pages.queue_forms import QueueFilterForm
from web.pages.refusals import refusal


@project_page
def queue_list(request, project):
    form = QueueFilterForm(request.POST or None, project=project)
    if request.method == "POST" and form.is_valid():
        with refusal(form) as refused:
            queue = queue_team_create(project=project, data=form.cleaned_data, by=request.user)
        if not refused:
            messages.success(request, f"Queue {queue.name} saved.")
            return redirect("queue", slug=project.slug, queue_id=queue.pk)
    queues = list(queue_filter_list(project=project))
    if can_curate(request) and not any(q.kind == QueueFilter.Kind.CASES_NEEDING_ANSWER for q in queues):
        # The review queue's cases are always one click away for those who can work them.
        queues.insert(0, queue_for_cases(project=project))
    rows = [(q, queue_progress(q)) for q in queues]
    return page_render(request, "queue/list.html", {"rows": rows, "form": form}, status=400 if form.errors else 200)


@project_page
def queue_next(request, project, queue_id):
    queue = queue_filter_get(project=project, queue_id=queue_id)
    assigned = queue_may_review(queue, request.user)
    if can_curate(request) and assigned:
        team = is_team_queue(queue)
        item = team_next(queue=queue, user=request.user) if team else queue_claim_next(queue=queue, user=request.user)
    elif can_curate(request):
        item = None
        messages.info(request, "This queue is assigned to other reviewers.")
    else:
        item = queue_first_open(queue)
    if item is None:
        return page_render(request, "queue/done.html", {"queue": queue, "progress": queue_progress(queue)})
    return redirect("queue-item", slug=project.slug, queue_id=queue.pk, item=item)


@project_page
def queue_item(request, project, queue_id, item):
    queue = queue_filter_get(project=project, queue_id=queue_id)
    subject = queue_item_load(queue, item)
    team = is_team_queue(queue)
    holder = None if team else queue_item_holder(queue, item, request.user)
    if request.method == "POST":
        response = _act(request, queue, subject, holder)
        if response is not None:
            return response
    elif can_curate(request) and holder is None and not team and queue_may_review(queue, request.user):
        queue_claim(queue=queue, item=item, user=request.user)
    cases = queue.kind == QueueFilter.Kind.CASES_NEEDING_ANSWER
    context = _case_context(request, subject) if cases else _run_context(request, project, subject, queue)
    state = queue_item_state(queue, item)
    context.update(
        {
            "queue": queue,
            "item": item,
            "holder": holder,
            "state": state,
            "progress": queue_progress(queue),
            "previous": None if team else queue_previous(queue=queue, user=request.user, before=item),
            "team": team,
        }
    )
    form_errors = any(f.errors for f in (context.get("label_form"), context.get("case_form")) if f is not None)
    return page_render(request, "queue/item.html", context, status=400 if form_errors else 200)


def _act(request, queue, subject, holder):
    """Carry out the posted action; a redirect when done, None to show the page again (with errors)."""
    if holder is not None:
        messages.error(request, f"{holder.get_username()} is working on this item; take the next one.")
        return redirect("queue", slug=queue.project.slug, queue_id=queue.pk)
    action = request.POST.get("action")
    if action == "skip" and is_team_queue(queue):
        review_record(queue=queue, item=subject.pk, user=request.user, outcome=Outcome.SKIPPED)
        messages.success(request, "Skipped.")
        return redirect("queue", slug=queue.project.slug, queue_id=queue.pk)
    if action == "skip":
        return _finish(request, queue, subject.pk, Outcome.SKIPPED, "Skipped.")
    if action == "label" and queue.kind == QueueFilter.Kind.RUNS:
        form = LabelForm(request.POST, configs=label_config_list(project=queue.project, include_archived=False))
        request.label_form = form
        if form.is_valid():
            with refusal(form) as refused:
                queue_label(queue=queue, trace=subject, user=request.user, values=form.values(),
                            comment=form.cleaned_data["comment"])  # fmt: skip
            if refused:
                return None
            if is_team_queue(queue):
                messages.success(request, f"Labelled {subject.trace_id}.")
                return redirect("queue", slug=queue.project.slug, queue_id=queue.pk)
            return _finish(request, queue, subject.pk, Outcome.LABELLED, f"Labelled {subject.trace_id}.")
        return None
    if action == "expected" and queue.kind == QueueFilter.Kind.CASES_NEEDING_ANSWER:
        return _save_expected(request, queue, subject)
    messages.error(request, "Unknown action.")
    return redirect("queue-item", slug=queue.project.slug, queue_id=queue.pk, item=subject.pk)


def _save_expected(request, queue, case):
    # Only the expected answer (and the version it was written on) is posted: the rest is the case as it is.
    form = CaseForm({**CaseForm.initial_for(case), **request.POST.dict()})
    request.case_form = form
    if form.is_valid() and form.cleaned_data["expected_output"] in (None, ""):
        form.add_error("expected_output", "Write the expected answer, or skip this case.")
    if form.is_valid():
        data = {k: v for k, v in form.case_data().items() if k in ("expected_output", "version")}
        with refusal(form) as refused:
            case, _ = case_update(case=case, data=data, by=request.user)
        if refused:
            return None
        return _finish(request, queue, case.pk, Outcome.EDITED, f"Saved the expected answer of {case.name}.")
    return None


def _finish(request, queue, item, outcome, text):
    with refusal(request=request) as refused:
        queue_item_finish(queue=queue, item=item, user=request.user, outcome=outcome)
    if not refused:
        messages.success(request, text)
    return redirect("queue", slug=queue.project.slug, queue_id=queue.pk)


def queue_after_capture(request, project, trace, queue_id):
    """After a run opened from queue ``queue_id`` was captured: the item is done (captured), on to the next."""
    try:
        queue = queue_filter_get(project=project, queue_id=int(queue_id))
    except (ValueError, DomainError):
        return redirect("run", slug=project.slug, trace_id=trace.trace_id)
    return _finish(request, queue, trace.pk, Outcome.CAPTURED, "Done in the queue: captured.")


def _run_context(request, project, trace, queue):
    configs = label_config_list(project=project, include_archived=False)
    scores, _ = run_scores(trace)
    me = request.user.get_username()
    mine = LabelForm.current_of(scores, me)
    mine_scores = [s for s in scores if s.detail.get("author") == me and s.detail.get("by") == "user"]
    form = getattr(request, "label_form", None)
    form = LabelForm(configs=configs, current=mine) if form is None else form
    case = trace.case
    expected = case.expected_output if case is not None else None
    diff = value_diff(expected, trace.output) if expected is not None and trace.output is not None else None
    return {
        "trace": trace,
        "tool_spans": [s for s in spans_in_tree_order(trace) if s.kind == "tool"],
        "scores": [s for s in scores if s.source not in (ScoreSource.HUMAN, ScoreSource.FEEDBACK)],
        # Blind review: a reviewer sees their own labels of the run, never the others'.
        "labels": [s for s in scores if s.source == ScoreSource.HUMAN and (not queue.blind or s in mine_scores)],
        "label_form": form,
        "expected": expected,
        "diff": diff,
    }


def _case_context(request, case):
    form = getattr(request, "case_form", None)
    form = CaseForm(initial=CaseForm.initial_for(case)) if form is None else form
    return {"case": case, "case_form": form, "source_run": case.source_run}
