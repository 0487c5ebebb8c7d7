from django.urls import path

from datasets import api

urlpatterns = [
    path("traces", api.TraceCollection.as_view(), name="api-traces"),
    path("traces/<path:trace_id>", api.TraceDetail.as_view(), name="api-trace"),
]
