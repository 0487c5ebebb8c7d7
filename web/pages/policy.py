"""The gate policy on the dataset page: everyone reads it and its history, admins change it.

A change goes through ``gating.policies`` like the API's, as a revision by the
user; a loosening (or a lower floor) needs the reason box filled in.
"""

from django import forms

from evalsite.errors import DomainError
from evalsite.models import Role
from gating.models import PolicyRevision
from gating.policies import floor_lower, policy_for, policy_update
from gating.revisions import policy_revisions

REVISIONS_SHOWN = 10


class PolicyForm(forms.Form):
    min_pass_rate = forms.FloatField(min_value=0, max_value=1, label="Floor (min pass rate)")
    trials = forms.IntegerField(min_value=1, max_value=100, label="Trials per case")
    trial_pass_ratio = forms.FloatField(min_value=0.01, max_value=1, label="Trial pass ratio")
    max_flaky = forms.IntegerField(min_value=0, required=False, label="Flaky cases allowed (empty: no limit)")
    max_abstained = forms.IntegerField(min_value=0, label="Unmeasured cases allowed")
    tolerance = forms.FloatField(min_value=0, max_value=1, label="Regression tolerance")
    ratchet = forms.BooleanField(required=False, label="Ratchet the floor up on a better baseline")
    fail_on_regression = forms.BooleanField(required=False, label="Fail on a decidable regression")
    judge_min_kappa = forms.FloatField(
        min_value=-1, max_value=1, required=False, label="Judge gates from kappa (empty: always)"
    )
    judge_min_labels = forms.IntegerField(min_value=1, label="Labels a judge's kappa rests on")
    input_match = forms.ChoiceField(
        choices=[("warn", "warn"), ("require", "require"), ("off", "off")],
        label="A run whose input is not its case's",
    )
    scorers = forms.CharField(required=False, label="Extra gating scorers (comma-separated)")
    reason = forms.CharField(
        required=False, max_length=2000, widget=forms.Textarea(attrs={"rows": 2}),
        label="Why (required to loosen the gate or lower the floor)",
    )  # fmt: skip

    def clean_scorers(self):
        return [s.strip() for s in self.cleaned_data["scorers"].split(",") if s.strip()]


def policy_form(policy, data=None):
    initial = {name: getattr(policy, name) for name in PolicyForm.base_fields if name not in ("scorers", "reason")}
    initial["scorers"] = ", ".join(policy.scorers)
    return PolicyForm(data, initial=initial, prefix="policy")


def policy_context(request, dataset, form=None):
    """What the dataset page shows of the gate policy."""
    policy = policy_for(dataset)
    is_admin = request.membership.allows(Role.ADMIN)
    return {
        "policy": policy,
        "policy_revisions": list(policy_revisions(dataset)[:REVISIONS_SHOWN]),
        "policy_form": (form or policy_form(policy)) if is_admin else None,
    }


def policy_apply(request, dataset, form):
    """Apply a valid ``form`` as the user's revision; the error (with its status) on the form, else ``None``."""
    values = dict(form.cleaned_data)
    reason, floor = values.pop("reason"), values.pop("min_pass_rate")
    try:
        policy = policy_update(
            dataset=dataset, changes=values, reason=reason, user=request.user, source=PolicyRevision.Source.PAGE
        )
        if floor != policy.min_pass_rate:
            floor_lower(policy=policy, new_floor=floor, reason=reason, user=request.user)
    except DomainError as exc:
        form.add_error(None, exc.detail)
        for error in exc.errors:
            if error.get("field") in form.fields:
                form.add_error(error["field"], error["message"])
        return exc.status
    return None
