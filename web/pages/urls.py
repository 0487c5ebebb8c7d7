"""The pages: sign-in, the project list, and one project's pages under ``/p/<slug>/``.

Who may see what is decided once, in ``web.pages.access``.
"""

from django.contrib.auth import views as auth_views
from django.urls import include, path

from web.pages import (
    adjudication,
    compare,
    datasets,
    experiments,
    exports,
    gates,
    harvest,
    home,
    judge,
    labels,
    monitors,
    online,
    pairwise,
    passes,
    queue,
    runs,
    scoring,
    team,
)

project_patterns = [
    path("", home.project_home, name="project-home"),
    path("runs/", runs.run_list, name="runs"),
    # A trace_id may contain slashes (ci/main/42), hence <path:>.
    path("runs/<path:trace_id>/", runs.run_detail, name="run"),
    path("datasets/", datasets.datasets_page, name="datasets"),
    # A dataset name may hold "/": the pages under a dataset come before its own page.
    path("datasets/<path:name>/export.jsonl", datasets.dataset_export, name="dataset-export"),
    path("datasets/<path:name>/import/", datasets.dataset_import, name="dataset-import"),
    path("datasets/<path:name>/cases/new/", datasets.case_new, name="case-new"),
    path("datasets/<path:name>/policy/", datasets.dataset_policy, name="dataset-policy"),
    path("datasets/<path:name>/", datasets.dataset_page, name="dataset"),
    path("cases/<int:case_id>/", datasets.case_page, name="case"),
    path("review/", datasets.review_page, name="review"),
    path("passes/", scoring.pass_list_page, name="passes"),
    path("passes/new/", passes.pass_new_page, name="pass-new"),
    path("passes/<int:pass_id>/", scoring.pass_page, name="pass"),
    path("passes/<int:pass_id>/progress.json", scoring.pass_progress, name="pass-progress"),
    path("review/scores/", scoring.review_page, name="review-scores"),
    path("queue/", queue.queue_list, name="queue-list"),
    path("queue/<int:queue_id>/", queue.queue_next, name="queue"),
    path("queue/<int:queue_id>/items/<int:item>/", queue.queue_item, name="queue-item"),
    path("queue/<int:queue_id>/adjudication/", adjudication.queue_adjudication, name="queue-adjudication"),
    path("labels/", labels.labels_page, name="labels"),
    path("agreement/", labels.agreement_page, name="agreement"),
    path("experiments/", experiments.experiments_page, name="experiments"),
    path("experiments/compare/", compare.compare_page, name="compare"),
    path("experiments/pairwise/", pairwise.pairwise_page, name="pairwise"),
    path("gate-runs/", experiments.gate_runs_page, name="gate-runs"),
    path("gate-runs/<int:gate_run_id>/", gates.gate_run_page, name="gate-run"),
    path("settings/judge/", judge.judge_settings, name="judge-settings"),
    path("settings/judge/test/", judge.judge_test, name="judge-test"),
    path("settings/", team.settings_page, name="project-settings"),
    path("settings/keys/", team.key_create, name="key-create"),
    path("settings/keys/<int:key_id>/revoke/", team.key_revoke, name="key-revoke"),
    path("settings/members/", team.member_add, name="member-add"),
    path("settings/members/<int:membership_id>/", team.member_update, name="member-update"),
    path("settings/invitations/", team.invitation_create, name="invitation-create"),
    path("settings/invitations/<int:invitation_id>/revoke/", team.invitation_revoke, name="invitation-revoke"),
    path("settings/quota/", team.quota_update, name="quota-update"),
    path("online-rules/", online.rules_page, name="online-rules"),
    path("harvest/", harvest.harvest_page, name="harvest"),
    path("harvest/<int:group_id>/", harvest.group_page, name="harvest-group"),
    path("harvest/<int:group_id>/queue/", harvest.group_queue, name="harvest-group-queue"),
    path("monitors/", monitors.monitors_page, name="monitors"),
    path("monitors/<int:monitor_id>/", monitors.monitor_page, name="monitor"),
    path("monitors/<int:monitor_id>/pause/", monitors.monitor_pause, name="monitor-pause"),
    path("monitors/<int:monitor_id>/test/", monitors.monitor_test_send, name="monitor-test"),
    path("alerts/<int:alert_id>/", monitors.alert_page, name="monitor-alert"),
    path("alerts/<int:alert_id>/queue/", monitors.alert_queue, name="monitor-alert-queue"),
    path("online-rules/<int:rule_id>/pause/", online.rule_pause, name="online-rule-pause"),
    path("settings/retention/", team.retention_update, name="retention-update"),
    path("settings/feedback-origins/", team.feedback_origins_update, name="feedback-origins-update"),
    path("settings/exports/", exports.export_start, name="project-export"),
    path("settings/exports/<int:export_id>.zip", exports.export_page_download, name="project-export-download"),
]

urlpatterns = [
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("", home.home, name="home"),
    path("switch/", home.project_switch, name="project-switch"),
    path("invite/<str:token>/", team.invitation_page, name="invitation"),
    path("p/<slug:slug>/", include(project_patterns)),
]
