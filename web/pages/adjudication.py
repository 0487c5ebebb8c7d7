"""A queue's agreement between reviewers and its adjudication: ``queue/<id>/adjudication/``.

Everyone who reads the project sees, per label config, how much the queue's reviewers
agree (``scoring.review.adjudication.reviewer_agreement``) and the items where they
disagree, with each reviewer's label. An admin decides an item: the decision becomes the
run's reference label of that config, recorded with who decided.
"""

from django.contrib import messages
from django.shortcuts import redirect

from datasets.run_selectors import trace_get
from evalsite.errors import Invalid
from evalsite.models import Role
from scoring.labels import label_config_get
from scoring.models import LabelKind
from scoring.review.adjudication import adjudicate, queue_disagreements, reviewer_agreements
from scoring.review.queue import queue_filter_get
from web.pages.access import page_render, project_page
from web.pages.refusals import refusal


def decision_value(config, raw):
    """The label posted as text (``true``/``false``, a category, a number), as the config's kind takes it."""
    if config.kind == LabelKind.BOOLEAN:
        return {"true": True, "false": False}.get(raw, raw)
    if config.kind == LabelKind.NUMERIC:
        try:
            return float(raw)
        except (TypeError, ValueError):
            raise Invalid(
                "The decision must be a number.", errors=[{"field": "value", "message": "must be a number"}]
            ) from None
    return raw


def _choices(config):
    """``[(posted text, shown text)]`` of the labels an admin may decide for ``config`` (none for numbers)."""
    if config.kind == LabelKind.BOOLEAN:
        return [("true", "yes"), ("false", "no")]
    if config.kind == LabelKind.CATEGORICAL:
        return [(o, o) for o in config.options]
    return []


@project_page(change_role=Role.ADMIN)
def queue_adjudication(request, project, queue_id):
    queue = queue_filter_get(project=project, queue_id=queue_id)
    if request.method == "POST":
        with refusal(request=request, prefix="Not decided: ") as refused:
            config = label_config_get(project=project, name=request.POST.get("config", ""))
            trace = trace_get(project=project, trace_id=request.POST.get("item", ""))
            adjudicate(
                queue=queue, trace=trace, config=config, value=decision_value(config, request.POST.get("value")),
                comment=request.POST.get("comment", "")[:2000],
                decided_by={"name": request.user.get_username(), "by": "user"},
            )  # fmt: skip
        if not refused:
            messages.success(request, f"Decided {config.name} of {trace.trace_id}: the run's reference label.")
        return redirect("queue-adjudication", slug=project.slug, queue_id=queue.pk)
    rows = [{**d, "choices": _choices(d["config"])} for d in queue_disagreements(queue=queue)]
    context = {
        "queue": queue,
        "agreements": reviewer_agreements(project=project, queue=queue),
        "disagreements": rows,
        "may_decide": request.membership.allows(Role.ADMIN),
    }
    return page_render(request, "queue/adjudication.html", context)
