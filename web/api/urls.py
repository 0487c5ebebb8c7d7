"""The API's paths under ``/v1/api/`` (ARCHITECTURE §9)."""

from django.urls import path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView

from web.api import (
    cases,
    datasets,
    experiments,
    feedback,
    gate,
    harvest,
    labels,
    monitors,
    online_rules,
    prices,
    scoring,
    traces,
)

urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    path("redoc/", SpectacularRedocView.as_view(url_name="api-schema"), name="api-redoc"),
    path("traces", traces.TraceCollection.as_view(), name="api-traces"),
    # Before traces/<path:trace_id>: a trace id may hold "/".
    path("traces/<path:trace_id>/labels", labels.TraceLabels.as_view(), name="api-trace-labels"),
    path("traces/<path:trace_id>/feedback", feedback.TraceFeedback.as_view(), name="api-trace-feedback"),
    path("traces/<path:trace_id>", traces.TraceDetail.as_view(), name="api-trace"),
    path("datasets", datasets.DatasetCollection.as_view(), name="api-datasets"),
    # Dataset and experiment names may hold "/" (a branch such as 123/merge): the paths
    # under a dataset come first, its own path last.
    path("datasets/<path:name>/cases", cases.CaseCollection.as_view(), name="api-cases"),
    path("datasets/<path:name>/cases/from-traces", cases.CaseCapture.as_view(), name="api-cases-capture"),
    path("datasets/<path:name>/coverage", harvest.DatasetCoverage.as_view(), name="api-dataset-coverage"),
    path("datasets/<path:name>/export", datasets.DatasetExport.as_view(), name="api-dataset-export"),
    path("datasets/<path:name>/import", datasets.DatasetImport.as_view(), name="api-dataset-import"),
    path("datasets/<path:name>/gate-policy/history", gate.GatePolicyHistory.as_view(), name="api-gate-policy-history"),
    path("datasets/<path:name>/gate-policy", gate.GatePolicyView.as_view(), name="api-gate-policy"),
    path("datasets/<path:name>", datasets.DatasetDetail.as_view(), name="api-dataset"),
    path("cases/<int:case_id>", cases.CaseDetail.as_view(), name="api-case"),
    path("cases/<int:case_id>/history", cases.CaseHistory.as_view(), name="api-case-history"),
    path("schemas/expectations", datasets.ExpectationsSchema.as_view(), name="api-schema-expectations"),
    path("label-configs", labels.LabelConfigCollection.as_view(), name="api-label-configs"),
    path("label-configs/<str:name>", labels.LabelConfigDetail.as_view(), name="api-label-config"),
    path("judge/criteria/<str:name>/agreement", labels.CriterionAgreement.as_view(), name="api-criterion-agreement"),
    path("scorers", scoring.ScorerList.as_view(), name="api-scorers"),
    path("score", scoring.ScoreNow.as_view(), name="api-score"),
    path("passes", scoring.PassCollection.as_view(), name="api-passes"),
    path("passes/<int:pass_id>", scoring.PassDetail.as_view(), name="api-pass"),
    path("experiments", experiments.ExperimentCollection.as_view(), name="api-experiments"),
    path("experiments/compare", experiments.ExperimentCompare.as_view(), name="api-experiments-compare"),
    path("experiments/<path:name>", experiments.ExperimentDetail.as_view(), name="api-experiment"),
    path("online-rules", online_rules.OnlineRuleCollection.as_view(), name="api-online-rules"),
    path("monitors", monitors.MonitorCollection.as_view(), name="api-monitors"),
    path("monitors/<int:monitor_id>", monitors.MonitorDetail.as_view(), name="api-monitor"),
    path("monitors/<int:monitor_id>/alerts", monitors.MonitorAlerts.as_view(), name="api-monitor-alerts"),
    path("online-rules/<int:rule_id>", online_rules.OnlineRuleDetail.as_view(), name="api-online-rule"),
    path(
        "online-rules/<int:rule_id>/backfill",
        online_rules.OnlineRuleBackfill.as_view(),
        name="api-online-rule-backfill",
    ),
    path("failure-groups", harvest.FailureGroupCollection.as_view(), name="api-failure-groups"),
    path("failure-groups/rebuild", harvest.FailureGroupRebuild.as_view(), name="api-failure-groups-rebuild"),
    path("failure-groups/<int:group_id>", harvest.FailureGroupDetail.as_view(), name="api-failure-group"),
    path("prices", prices.PriceCollection.as_view(), name="api-prices"),
    path("prices/<path:model>", prices.PriceDetail.as_view(), name="api-price"),
    path("gate", gate.GateView.as_view(), name="api-gate"),
    path("gate-runs", gate.GateRunCollection.as_view(), name="api-gate-runs"),
    path("gate-runs/<int:gate_run_id>", gate.GateRunDetail.as_view(), name="api-gate-run"),
    path("gate-runs/<int:gate_run_id>/cases", gate.GateRunCases.as_view(), name="api-gate-run-cases"),
]
