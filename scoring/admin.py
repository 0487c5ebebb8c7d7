"""Admin of scores, abstentions and skips (reviewed and re-scored here), and scoring passes.

The score table is the largest of the system: its lists never count all rows, and the
scorer filter offers the catalog's ids, the judge criteria and label configs of every
project instead of reading the distinct values.
"""

from django.contrib import admin, messages
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from checks.scorers import SCORERS
from scoring.judge.admin import JudgeConfigAdmin
from scoring.labels import LABEL_PREFIX
from scoring.models import Abstention, JudgeConfig, LabelConfig, Score, ScoringChunk, ScoringPass
from scoring.passes.rescore import abstentions_mark_reviewed, abstentions_rescore


class ScorerFilter(admin.SimpleListFilter):
    title = "scorer"
    parameter_name = "scorer"

    def lookups(self, request, model_admin):
        criteria = {c for criteria in JudgeConfig.objects.values_list("criteria", flat=True) for c in criteria or {}}
        labels = {f"{LABEL_PREFIX}{name}" for name in LabelConfig.objects.values_list("name", flat=True)}
        return [(scorer_id, scorer_id) for scorer_id in [*SCORERS, *sorted(criteria), *sorted(labels)]]

    def queryset(self, request, queryset):
        return queryset.filter(scorer=self.value()) if self.value() else queryset


@admin.register(Score)
class ScoreAdmin(admin.ModelAdmin):
    list_display = ["trace", "scorer", "scorer_version", "value", "passed", "run_revision", "experiment", "created_at"]
    list_filter = [ScorerFilter, "passed", "source"]
    list_select_related = ["trace", "experiment"]
    search_fields = ["trace__trace_id"]
    raw_id_fields = ["trace", "case", "experiment", "scoring_pass", "project"]
    readonly_fields = ["config_hash", "created_at"]
    show_full_result_count = False


@admin.register(Abstention)
class AbstentionAdmin(admin.ModelAdmin):
    list_display = [
        "trace",
        "scorer",
        "kind",
        "reason",
        "message",
        "project",
        "scoring_pass",
        "created_at",
        "reviewed_at",
    ]
    list_filter = [ScorerFilter, "reason", "kind", "project", ("created_at", admin.DateFieldListFilter), "reviewed_at"]
    list_select_related = ["trace", "project"]
    search_fields = ["trace__trace_id", "reason"]
    raw_id_fields = ["trace", "case", "experiment", "scoring_pass", "project", "reviewed_by"]
    readonly_fields = ["created_at"]
    actions = ["rescore_selected_runs", "mark_reviewed"]
    show_full_result_count = False

    @admin.display(description="detail")
    def message(self, abstention):
        return str((abstention.detail or {}).get("message", ""))[:120]

    @admin.action(description="Re-score the selected runs (a pass over their runs and scorers)")
    def rescore_selected_runs(self, request, queryset):
        started, problems = abstentions_rescore(abstentions=queryset, requested_by=request.user)
        if started:
            links = format_html_join(
                ", ",
                '<a href="{}">pass {}</a>',
                ((reverse("admin:scoring_scoringpass_change", args=[p.pk]), p.pk) for p in started),
            )
            self.message_user(request, format_html("Started {}.", links), messages.SUCCESS)
        for problem in problems:
            self.message_user(request, f"Not re-scored: {problem}", messages.ERROR)

    @admin.action(description="Mark the selected ones reviewed")
    def mark_reviewed(self, request, queryset):
        count = abstentions_mark_reviewed(abstentions=queryset, user=request.user)
        self.message_user(request, f"{count} marked reviewed.", messages.SUCCESS)


class ScoringChunkInline(admin.TabularInline):
    model = ScoringChunk
    fields = [
        "ordinal", "runs", "status", "attempts", "claimed_by", "written", "skipped", "existing", "started_at",
        "finished_at",
    ]  # fmt: skip
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = False
    max_num = 0

    def get_queryset(self, request):
        # trace_pks can hold thousands of ids per chunk: never read it here.
        return super().get_queryset(request).defer("trace_pks", "report")


@admin.register(ScoringPass)
class ScoringPassAdmin(admin.ModelAdmin):
    list_display = ["id", "project", "status", "progress_shown", "written", "skipped", "existing", "created_at"]
    list_filter = ["status", "background", "dry_run", "project"]
    list_select_related = ["project"]
    readonly_fields = [
        "project", "scorers", "config", "selection", "dry_run", "background", "status", "total", "done", "written",
        "skipped", "existing", "chunk_runs", "queue", "chunks_total", "chunks_done", "requested_by",
        "requested_by_key", "created_at", "started_at", "finished_at", "progressed_at", "error", "skips_link",
    ]  # fmt: skip
    inlines = [ScoringChunkInline]

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        # A pass is the record of who scored what; its scores and skips point to it.
        return False

    @admin.display(description="progress")
    def progress_shown(self, scoring_pass):
        return f"{scoring_pass.done}/{scoring_pass.total}"

    @admin.display(description="skips")
    def skips_link(self, scoring_pass):
        url = reverse("admin:scoring_abstention_changelist") + f"?scoring_pass__id__exact={scoring_pass.pk}"
        return format_html('<a href="{}">{} skips and abstentions</a>', url, scoring_pass.skipped)


# The form never renders or logs the stored key; see scoring/judge/admin.py.
admin.site.register(JudgeConfig, JudgeConfigAdmin)
