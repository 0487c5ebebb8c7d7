from django.contrib import admin, messages

from evalsite.models import ApiKey, Heartbeat, Membership, Project
from evalsite.projects import api_key_create, api_key_revoke


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]


class ApiKeyInline(admin.TabularInline):
    model = ApiKey
    extra = 0
    fields = ["name", "prefix", "created_at", "last_used_at", "revoked_at"]
    readonly_fields = fields
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = ["slug", "name", "quota_per_minute", "created_at"]
    search_fields = ["slug", "name"]
    inlines = [MembershipInline, ApiKeyInline]


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    list_display = ["prefix", "name", "project", "created_at", "last_used_at", "revoked_at"]
    list_filter = ["project", ("revoked_at", admin.EmptyFieldListFilter)]
    search_fields = ["prefix", "name", "project__slug"]
    actions = ["revoke"]

    def get_fields(self, request, obj=None):
        if obj is None:
            return ["project", "name"]
        return ["project", "name", "prefix", "created_by", "created_at", "last_used_at", "revoked_at"]

    def get_readonly_fields(self, request, obj=None):
        if obj is None:
            return []
        return ["project", "prefix", "created_by", "created_at", "last_used_at", "revoked_at"]

    def save_model(self, request, obj, form, change):
        if change:
            super().save_model(request, obj, form, change)
            return
        key, full_key = api_key_create(project=obj.project, name=obj.name, created_by=request.user)
        obj.pk = key.pk
        obj.refresh_from_db()
        messages.warning(request, f"The new API key is {full_key} — copy it now, it is not shown again.")

    @admin.action(description="Revoke selected keys")
    def revoke(self, request, queryset):
        for key in queryset:
            api_key_revoke(key=key)
        self.message_user(request, f"Revoked {queryset.count()} key(s).")


@admin.register(Heartbeat)
class HeartbeatAdmin(admin.ModelAdmin):
    list_display = ["hostname", "seen_at"]
