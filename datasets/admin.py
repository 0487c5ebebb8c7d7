from django.contrib import admin
from django.urls import reverse

from datasets.models import CaseRevision, Dataset, Experiment, GoldenCase, Span, Trace


class SpanInline(admin.TabularInline):
    model = Span
    extra = 0
    fields = [
        "span_id",
        "parent_span_id",
        "kind",
        "name",
        "status",
        "latency_ms",
        "cost_cents",
        "input",
        "output",
        "error",
    ]
    readonly_fields = fields
    can_delete = False
    ordering = ["position"]

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Trace)
class TraceAdmin(admin.ModelAdmin):
    list_display = ["trace_id", "name", "project", "status", "experiment", "started_at", "latency_ms", "cost_cents"]
    list_filter = ["status", "source", "project", "experiment", ("started_at", admin.DateFieldListFilter)]
    search_fields = ["trace_id", "name"]
    date_hierarchy = "started_at"
    list_select_related = ["project", "experiment"]
    raw_id_fields = ["case", "experiment"]
    readonly_fields = ["content_hash", "ingested_at"]
    inlines = [SpanInline]
    show_full_result_count = False


class CaseRevisionInline(admin.TabularInline):
    model = CaseRevision
    extra = 0
    fields = ["version", "action", "changed_by", "changed_by_key", "changed_at", "old", "new"]
    readonly_fields = fields
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Dataset)
class DatasetAdmin(admin.ModelAdmin):
    list_display = ["name", "project", "archived", "created_at"]
    list_filter = ["project", "archived"]
    search_fields = ["name"]

    def has_delete_permission(self, request, obj=None):
        # Deleting a dataset would delete its curated cases and their history: archive it instead.
        return False


@admin.register(GoldenCase)
class GoldenCaseAdmin(admin.ModelAdmin):
    """Read-only: a case changes only through the curation services, which write its revision.

    Reviewers edit and archive cases on the case page (``view on site``) or the API.
    """

    list_display = ["name", "dataset", "status", "version", "source_trace_id", "updated_at"]
    list_filter = ["status", "dataset__project", "dataset"]
    search_fields = ["name", "source_trace_id"]
    list_select_related = ["dataset"]
    inlines = [CaseRevisionInline]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def view_on_site(self, obj):
        return reverse("case", kwargs={"slug": obj.dataset.project.slug, "case_id": obj.pk})


@admin.register(Experiment)
class ExperimentAdmin(admin.ModelAdmin):
    list_display = ["name", "project", "dataset", "created_at"]
    list_filter = ["project"]
    search_fields = ["name"]
