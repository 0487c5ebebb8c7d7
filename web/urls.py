"""The root URLconf: the API, the OTLP endpoint, the admin, the health check, the CI client and the pages."""

from django.contrib import admin
from django.urls import include, path, re_path

from web import client_package, metrics, system
from web.otlp.views import LogExport, TraceExport

urlpatterns = [
    path("v1/api/", include("web.api.urls")),
    # OTLP/HTTP: the path OpenTelemetry exporters post to (docs/otel.md).
    path("v1/traces", TraceExport.as_view(), name="otlp-traces"),
    path("v1/logs", LogExport.as_view(), name="otlp-logs"),
    # Anything else under the API answers in the API's error format, DEBUG or not.
    re_path(r"^v1/", system.not_found),
    path("admin/", admin.site.urls),
    path("healthz", system.health, name="health"),
    # The CI client, for pip: no git needed in the CI image (docs/evalgate.md).
    path("client/evalgate.tar.gz", client_package.client_download, name="client-download"),
    # The GitHub action and the GitLab template that install it, from the same server.
    path("client/action.yml", client_package.ci_file_download, {"name": "action.yml"}, name="client-action"),
    path(
        "client/evalgate.gitlab-ci.yml",
        client_package.ci_file_download,
        {"name": "evalgate.gitlab-ci.yml"},
        name="client-gitlab-template",
    ),
    path("metrics", metrics.metrics, name="metrics"),
    path("", include("web.pages.urls")),
]

handler404 = "web.system.not_found"
handler500 = "web.system.server_error"
