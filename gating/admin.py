from django import forms
from django.contrib import admin

from evalsite.errors import DomainError
from evalsite.models import Membership, Role
from gating.models import FloorChange, GatePolicy, GateRun, PolicyRevision
from gating.policies import policy_and_floor_update
from gating.policy_fields import POLICY_FIELDS


class FloorChangeInline(admin.TabularInline):
    model = FloorChange
    extra = 0
    fields = ["created_at", "old_floor", "new_floor", "source", "reason", "changed_by", "changed_by_key", "gate_run"]
    readonly_fields = fields
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False


class PolicyRevisionInline(admin.TabularInline):
    model = PolicyRevision
    extra = 0
    fields = ["number", "created_at", "author", "source", "loosens", "changes", "reason"]
    readonly_fields = fields
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False


class GatePolicyForm(forms.ModelForm):
    reason = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3}),
        required=False,
        help_text="Required when you change the floor or loosen the gate; kept in the policy's history.",
    )

    class Meta:
        model = GatePolicy
        fields = [
            "min_pass_rate",
            "reason",
            "ratchet",
            "fail_on_regression",
            "tolerance",
            "scorers",
            "max_abstained",
            "baseline",
        ]

    def clean(self):
        cleaned = super().clean()
        floor_changed = self.instance.pk and "min_pass_rate" in self.changed_data
        if floor_changed and not (cleaned.get("reason") or "").strip():
            self.add_error("reason", "Say why the floor changes: it is kept in the floor history.")
        return cleaned


@admin.register(GatePolicy)
class GatePolicyAdmin(admin.ModelAdmin):
    """Only admins of the dataset's project (or superusers) see and change its policy."""

    form = GatePolicyForm
    list_display = ["dataset", "project", "min_pass_rate", "ratchet", "fail_on_regression", "baseline", "updated_at"]
    list_select_related = ["dataset__project", "baseline"]
    inlines = [FloorChangeInline, PolicyRevisionInline]
    raw_id_fields = ["baseline"]

    @admin.display(description="project")
    def project(self, policy):
        return policy.dataset.project

    def get_queryset(self, request):
        policies = super().get_queryset(request)
        if request.user.is_superuser:
            return policies
        admin_of = Membership.objects.filter(user=request.user, role=Role.ADMIN).values("project_id")
        return policies.filter(dataset__project_id__in=admin_of)

    def get_readonly_fields(self, request, obj=None):
        return [] if obj is None else ["dataset"]

    def get_fields(self, request, obj=None):
        fields = list(self.form.Meta.fields)
        return fields if obj is not None else ["dataset", *fields]

    def save_model(self, request, obj, form, change):
        """A change goes through the policy's services, so it is a revision like any other."""
        if not change:
            super().save_model(request, obj, form, change)
            return
        reason = form.cleaned_data["reason"]
        changes = {name: form.cleaned_data[name] for name in form.changed_data if name in POLICY_FIELDS}
        floor = changes.pop("min_pass_rate", None)
        try:
            policy_and_floor_update(
                dataset=obj.dataset, changes=changes, floor=floor, reason=reason, user=request.user,
                source=PolicyRevision.Source.ADMIN,
            )  # fmt: skip
        except DomainError as exc:
            self.message_user(request, exc.detail, level="error")
        obj.refresh_from_db()


@admin.register(GateRun)
class GateRunAdmin(admin.ModelAdmin):
    list_display = ["id", "project", "dataset", "experiment", "verdict", "pass_rate", "floor", "created_at"]
    list_filter = ["verdict", "status", "project"]
    readonly_fields = [f.name for f in GateRun._meta.fields]

    def has_add_permission(self, request):
        return False
