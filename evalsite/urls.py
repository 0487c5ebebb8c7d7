from django.contrib import admin
from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView

from datasets.otlp.views import TraceExport
from evalsite import views

api_patterns = [
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    path("redoc/", SpectacularRedocView.as_view(url_name="api-schema"), name="api-redoc"),
    path("", include("datasets.urls")),
    path("", include("experiments.urls")),
    path("", include("scoring.urls")),
]

urlpatterns = [
    path("v1/api/", include(api_patterns)),
    # OTLP/HTTP: the path OpenTelemetry exporters post to (docs/otel.md).
    path("v1/traces", TraceExport.as_view(), name="otlp-traces"),
    # Anything else under the API answers in the API's error format, DEBUG or not.
    re_path(r"^v1/", views.not_found),
    path("admin/", admin.site.urls),
    path("healthz", views.health, name="health"),
    path("", include("evalsite.page_urls")),
]

handler404 = "evalsite.views.not_found"
handler500 = "evalsite.views.server_error"
