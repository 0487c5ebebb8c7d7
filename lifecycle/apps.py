from django.apps import AppConfig


class LifecycleConfig(AppConfig):
    """Whole-project jobs: retention, the project archive (export and import) and export jobs."""

    name = "lifecycle"
    verbose_name = "Project data lifecycle"
