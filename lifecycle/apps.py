from django.apps import AppConfig


class LifecycleConfig(AppConfig):
    """Whole-project jobs: retention and the project archive (export and import). No models."""

    name = "lifecycle"
    verbose_name = "Project data lifecycle"
