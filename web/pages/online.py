"""The online rules page: each rule with what it did; admins create, pause and resume them.

The form's fields are the API's (``online.rules``); its errors come back next to the field.
"""

from django import forms
from django.contrib import messages
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from evalsite.models import Role
from online.rules import rule_counts, rule_create, rule_get, rule_list, rule_update
from web.pages.access import page_render, project_page
from web.pages.refusals import refusal


class RuleForm(forms.Form):
    name = forms.CharField(max_length=100)
    scorers = forms.CharField(max_length=500, help_text="Comma-separated: built-in scorers and judge criteria.")
    sample_rate = forms.FloatField(min_value=0, max_value=1, initial=1.0, help_text="0 to 1 of the matching runs.")
    run_name = forms.CharField(max_length=200, required=False, label="Runs named")
    experiment = forms.CharField(
        max_length=200, required=False, initial="none", help_text='"none": production runs only; empty: any.'
    )
    tags = forms.CharField(max_length=500, required=False, help_text="Comma-separated; every one present.")

    def rule_data(self):
        data = self.cleaned_data
        split = [s.strip() for s in data["scorers"].split(",") if s.strip()]
        rule_filter = {"name": data["run_name"], "experiment": data["experiment"]}
        rule_filter = {k: v for k, v in rule_filter.items() if v}
        tags = [t.strip() for t in data["tags"].split(",") if t.strip()]
        if tags:
            rule_filter["tags"] = tags
        return {"name": data["name"], "scorers": split, "sample_rate": data["sample_rate"], "filter": rule_filter}


def _render(request, project, form, status=200):
    rules = [(rule, rule_counts(rule)) for rule in rule_list(project=project)]
    can_change = request.membership.allows(Role.ADMIN)
    context = {"rules": rules, "form": form if can_change else None, "can_change": can_change}
    return page_render(request, "online/rules.html", context, status=status)


_FORM_FIELDS = {"filter.name": "run_name"}


@project_page(change_role=Role.ADMIN)
def rules_page(request, project):
    form = RuleForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        with refusal(form, fields=_FORM_FIELDS) as refused:
            rule = rule_create(project=project, data=form.rule_data(), user=request.user)
        if refused:
            return _render(request, project, form, status=refused.error.status)
        messages.success(request, f"Rule {rule.name} scores matching runs as they arrive.")
        return redirect("online-rules", slug=project.slug)
    return _render(request, project, form, status=400 if form.errors else 200)


@require_POST
@project_page(change_role=Role.ADMIN)
def rule_pause(request, project, rule_id):
    rule = rule_get(project=project, rule_id=rule_id)
    rule = rule_update(rule=rule, data={"paused": not rule.paused})
    messages.success(request, f"Rule {rule.name} is {'paused' if rule.paused else 'running'}.")
    return redirect("online-rules", slug=project.slug)
