"""The judge configuration in the Django admin (registered in ``scoring/admin.py``).

Saving goes through ``judge_configure``, like every other surface. The stored key is
never a field of the form and never displayed: the list and the page say whether a key
is set, nothing more.
"""

from django.contrib import admin

from scoring.judge.forms import JudgeConfigAdminForm
from scoring.judge.services import judge_configure


class JudgeConfigAdmin(admin.ModelAdmin):
    form = JudgeConfigAdminForm
    list_display = ["project", "model", "endpoint", "key_status", "timeout_seconds", "max_concurrency", "updated_at"]
    list_select_related = ["project"]
    search_fields = ["project__slug", "model", "endpoint"]
    autocomplete_fields = ["project"]
    readonly_fields = ["key_status", "updated_at", "updated_by"]

    def get_fields(self, request, obj=None):
        editable = ["endpoint", "model", "new_api_key", "clear_api_key", "timeout_seconds", "max_concurrency"]
        fields = [*editable, "criteria_text"]
        if obj is None:
            return ["project", *fields]
        if not self.has_change_permission(request, obj):
            # A read-only view renders model attributes: show no key field at all.
            return ["project", "endpoint", "model", "key_status", "timeout_seconds", "max_concurrency", "criteria"]
        return ["project", "key_status", *fields, "updated_at", "updated_by"]

    def get_readonly_fields(self, request, obj=None):
        if obj is None:
            return []
        return ["project", *self.readonly_fields]

    @admin.display(description="API key")
    def key_status(self, obj):
        return "a key is set" if obj.api_key else "no key"

    def save_model(self, request, obj, form, change):
        values = form.judge_values()
        project = obj.project if change else form.cleaned_data["project"]
        config = judge_configure(project=project, actor=request.user, **values)
        obj.pk = config.pk
        obj.refresh_from_db()
