from django.apps import AppConfig


class WebConfig(AppConfig):
    name = "web"
    verbose_name = "Web"

    def ready(self):
        # Registers the OpenAPI description of the API key scheme.
        from web.api import openapi  # noqa: F401
