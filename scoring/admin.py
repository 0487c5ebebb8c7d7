from django.contrib import admin

from scoring.models import Abstention, Score, ScoringPass


@admin.register(Score)
class ScoreAdmin(admin.ModelAdmin):
    list_display = ["trace", "scorer", "scorer_version", "value", "passed", "experiment", "created_at"]
    list_filter = ["scorer", "passed", "source", "project"]
    raw_id_fields = ["trace", "case", "experiment", "scoring_pass"]


@admin.register(Abstention)
class AbstentionAdmin(admin.ModelAdmin):
    list_display = ["trace", "scorer", "reason", "project", "created_at", "reviewed_at"]
    list_filter = ["scorer", "reason", "project", ("created_at", admin.DateFieldListFilter)]
    raw_id_fields = ["trace", "case", "experiment", "scoring_pass"]


@admin.register(ScoringPass)
class ScoringPassAdmin(admin.ModelAdmin):
    list_display = ["id", "project", "status", "total", "done", "written", "skipped", "created_at"]
    list_filter = ["status", "project"]
