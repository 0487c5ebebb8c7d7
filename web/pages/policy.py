"""The gate policy on the dataset page: everyone reads it and its history, admins change it.

A change goes through ``gating.policies`` like the API's, as a revision by the
user; a loosening (or a lower floor) needs the reason box filled in. The form is built
from the policy's fields as ``gating.policy_fields`` declares them.
"""

from django import forms

from evalsite.models import Role
from gating.models import PolicyRevision
from gating.policies import policy_and_floor_update, policy_for
from gating.policy_fields import POLICY_TABLE
from gating.revisions import policy_revisions
from web.pages.refusals import refusal

REVISIONS_SHOWN = 10


def _form_field(f):
    optional = {"required": False} if f.nullable or f.kind in ("bool", "scorers") else {}
    if f.kind == "float":
        return forms.FloatField(min_value=f.minimum, max_value=f.maximum, label=f.label, **optional)
    if f.kind == "int":
        return forms.IntegerField(min_value=f.minimum, max_value=f.maximum, label=f.label, **optional)
    if f.kind == "bool":
        return forms.BooleanField(label=f.label, **optional)
    if f.kind == "choice":
        return forms.ChoiceField(choices=[(c, c) for c in f.choices], label=f.label, **optional)
    if f.kind == "scorers":
        return forms.CharField(label=f.label, **optional)
    raise ValueError(f"policy field {f.name!r} of kind {f.kind!r} has no form field")


def _clean_scorers(name):
    def clean(self):
        return [s.strip() for s in self.cleaned_data[name].split(",") if s.strip()]

    return clean


def _clean_above(f):
    def clean(self):
        value = self.cleaned_data[f.name]
        if value is not None and value <= f.above:
            raise forms.ValidationError(f.above_message)
        return value

    return clean


def _policy_form_class():
    """The form of every policy field with a page label (``gating.policy_fields``), and the reason."""
    shown = [f for f in POLICY_TABLE if f.label is not None]
    attrs = {f.name: _form_field(f) for f in shown}
    attrs.update({f"clean_{f.name}": _clean_scorers(f.name) for f in shown if f.kind == "scorers"})
    attrs.update({f"clean_{f.name}": _clean_above(f) for f in shown if f.above is not None})
    attrs["reason"] = forms.CharField(
        required=False, max_length=2000, widget=forms.Textarea(attrs={"rows": 2}),
        label="Why (required to loosen the gate or lower the floor)",
    )  # fmt: skip
    return type("PolicyForm", (forms.Form,), attrs)


PolicyForm = _policy_form_class()


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
    with refusal(form) as refused:
        policy_and_floor_update(
            dataset=dataset, changes=values, floor=floor, reason=reason, user=request.user,
            source=PolicyRevision.Source.PAGE,
        )  # fmt: skip
    if not refused:
        return None
    form.add_error(None, refused.error.detail)  # what a loosening needs, above the fields it names
    return refused.error.status
