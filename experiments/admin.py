from django.contrib import admin

from experiments.models import Experiment


@admin.register(Experiment)
class ExperimentAdmin(admin.ModelAdmin):
    list_display = ["name", "project", "dataset", "created_at"]
    list_filter = ["project"]
    search_fields = ["name"]
