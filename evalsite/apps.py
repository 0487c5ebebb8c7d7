from django.apps import AppConfig


class EvalsiteConfig(AppConfig):
    name = "evalsite"
    verbose_name = "Projects and keys"

    def ready(self):
        # Registers the OpenAPI description of the API key scheme.
        from evalsite import openapi  # noqa: F401
