from django.urls import path

from experiments import api

urlpatterns = [
    path("experiments", api.ExperimentCollection.as_view(), name="api-experiments"),
    path("experiments/compare", api.ExperimentCompare.as_view(), name="api-experiments-compare"),
    path("experiments/<str:name>", api.ExperimentDetail.as_view(), name="api-experiment"),
    path("datasets/<str:name>/gate-policy", api.GatePolicyView.as_view(), name="api-gate-policy"),
    path("gate", api.GateView.as_view(), name="api-gate"),
    path("gate-runs", api.GateRunCollection.as_view(), name="api-gate-runs"),
    path("gate-runs/<int:gate_run_id>", api.GateRunDetail.as_view(), name="api-gate-run"),
]
