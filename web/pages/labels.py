"""Labels pages: every label of the project (by config, by author), and the judge's agreement with reviewers.

``labels/`` lists the current labels, newest first, filtered by label config and author;
admins define label configs there (and archive or restore them: never a delete).
``agreement/`` shows, per judge criterion, what ``GET /v1/api/judge/criteria/{name}/agreement``
answers (n, accuracy, kappa, confusion matrix, the runs in disagreement) and, per gate
policy, whether the criterion gates, is advisory or is not named by the policy; a button
opens the queue of the runs in disagreement. Below, per label config, the agreement between
reviewers (``scoring.review.adjudication``: kappa for two, Krippendorff's alpha for more). The run page's label form is here too (``run_label_post``).
"""

from django import forms
from django.contrib import messages
from django.shortcuts import redirect

from evalsite.models import Role
from gating.selectors import gate_policy_list
from scoring.judge.calibration import advisory_reason, agreement, disagreements
from scoring.labels import (
    label_authors,
    label_config_create,
    label_config_get,
    label_config_list,
    label_config_update,
    labels_of_project,
    labels_write,
)
from scoring.models import LabelKind
from scoring.review.adjudication import reviewer_agreements
from scoring.review.queue import queue_for_disagreements
from web.pages.access import cursor_page, page_render, project_page
from web.pages.label_forms import LabelForm
from web.pages.refusals import refusal

LABELS_PER_PAGE = 50
DISAGREEMENTS_LISTED = 20


class LabelConfigForm(forms.Form):
    """A new label config, as an admin types it (lists comma-separated); ``scoring.labels`` judges it."""

    name = forms.CharField(max_length=100)
    description = forms.CharField(required=False, max_length=1000)
    kind = forms.ChoiceField(choices=LabelKind.choices)
    options = forms.CharField(required=False, help_text="categorical: the categories, comma-separated")
    passing = forms.CharField(required=False, help_text="categorical: those that pass, comma-separated")
    minimum = forms.FloatField(required=False, help_text="numeric")
    maximum = forms.FloatField(required=False, help_text="numeric")
    pass_threshold = forms.FloatField(required=False, help_text="numeric: a label at least this passes")

    def config_data(self):
        d = self.cleaned_data
        data = {"name": d["name"], "description": d["description"], "kind": d["kind"]}
        if d["kind"] == LabelKind.CATEGORICAL:
            data["options"] = [o.strip() for o in d["options"].split(",") if o.strip()]
            data["passing"] = [o.strip() for o in d["passing"].split(",") if o.strip()]
        if d["kind"] == LabelKind.NUMERIC:
            data.update({k: d[k] for k in ("minimum", "maximum", "pass_threshold") if d[k] is not None})
        return data


class LabelFilterForm(forms.Form):
    config = forms.ChoiceField(required=False, label="Label")
    author = forms.ChoiceField(required=False)

    def __init__(self, *args, configs, authors, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["config"].choices = [("", "any label")] + [(c.name, c.name) for c in configs]
        self.fields["author"].choices = [("", "anyone")] + [(a, a) for a in authors]

    def filters(self):
        if not self.is_valid():
            return {}
        return {k: v for k, v in self.cleaned_data.items() if v}


@project_page(change_role=Role.ADMIN)
def labels_page(request, project):
    """The labels, filtered; admins also define label configs here and archive or restore them."""
    config_form = LabelConfigForm(request.POST if request.POST.get("action") == "create" else None)
    if request.method == "POST":
        done = _config_change(request, project, config_form)
        if done:
            return redirect("labels", slug=project.slug)
    configs = list(label_config_list(project=project))
    filters = LabelFilterForm(request.GET or None, configs=configs, authors=label_authors(project=project))
    labels, newer, older = cursor_page(
        request,
        labels_of_project(project=project, **filters.filters()),
        ordering=("-created_at", "-id"),
        page_size=LABELS_PER_PAGE,
    )
    context = {"filters": filters, "labels": labels, "newer": newer, "older": older, "configs": configs}
    context["config_form"] = config_form
    return page_render(request, "labels/list.html", context, status=400 if config_form.errors else 200)


def _config_change(request, project, form):
    """Create (``action=create``), archive or restore a label config; True when something was written."""
    action = request.POST.get("action")
    if action in ("archive", "restore"):
        config = label_config_get(project=project, name=request.POST.get("config", ""))
        label_config_update(config=config, data={"archived": action == "archive"})
        messages.success(request, f"Label config {config.name} {action}d.")
        return True
    if action == "create" and form.is_valid():
        with refusal(form) as refused:
            config = label_config_create(project=project, data=form.config_data())
        if refused:
            return False
        messages.success(request, f"Label config {config.name} created.")
        return True
    return False


def _gating(policies, found):
    """``[(dataset name, state, text)]``: does the criterion gate under each dataset's policy?

    Only a policy naming the criterion among its scorers gates every case on it; another
    one calls it for the cases whose expectations name it, and the page says so.
    """
    rows = []
    for policy in policies:
        if policy.judge_min_kappa is None:
            state, text = "gates", "gates: the policy sets no judge_min_kappa"
        else:
            reason = advisory_reason(found, min_kappa=policy.judge_min_kappa, min_labels=policy.judge_min_labels)
            needs = f"needs kappa {policy.judge_min_kappa:.2f} on {policy.judge_min_labels} labels"
            state, text = ("advisory", reason) if reason else ("gates", needs)
        if found.criterion not in (policy.scorers or []):
            text = f"not among the policy's scorers: only cases whose expectations name it are judged by it ({text})"
            state = "not named" if state == "gates" else state
        rows.append((policy.dataset.name, state, text))
    return rows


@project_page
def agreement_page(request, project):
    if request.method == "POST":
        criterion = label_config_get(project=project, name=request.POST.get("criterion", ""))
        with refusal(request=request) as refused:
            queue = queue_for_disagreements(project=project, criterion=criterion.name, by=request.user)
        if refused:
            return redirect("agreement", slug=project.slug)
        return redirect("queue", slug=project.slug, queue_id=queue.pk)
    policies = gate_policy_list(project=project)
    criteria = []
    for config in label_config_list(project=project, include_archived=False, criteria_only=True):
        found = agreement(project=project, criterion=config.name)
        criteria.append(
            {
                "config": config,
                "agreement": found,
                "disagreements": disagreements(project=project, criterion=config.name, limit=DISAGREEMENTS_LISTED),
                "gating": _gating(policies, found),
            }
        )
    context = {"criteria": criteria, "reviewers": reviewer_agreements(project=project)}
    return page_render(request, "labels/agreement.html", context)


def run_label_post(request, project, trace):
    """Label ``trace`` from the run page's form; ``(form, done)``: done when the labels were written."""
    form = LabelForm(request.POST, configs=label_config_list(project=project, include_archived=False))
    if not form.is_valid():
        return form, False
    with refusal(form) as refused:
        labels_write(
            project=project, trace=trace, values=form.values(), comment=form.cleaned_data["comment"],
            author={"name": request.user.get_username(), "by": "user"},
        )  # fmt: skip
    if refused:
        return form, False
    messages.success(request, "Labels saved.")
    return form, True
