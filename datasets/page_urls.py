"""Pages of one project, under ``/p/<slug>/`` (see ``evalsite.pages`` for who may see what)."""

from django.urls import path

from datasets import run_views, views

urlpatterns = [
    path("", views.project_home, name="project-home"),
    path("runs/", run_views.run_list, name="runs"),
    # A trace_id may contain slashes (ci/main/42), hence <path:>.
    path("runs/<path:trace_id>/", run_views.run_detail, name="run"),
    path("datasets/", views.datasets_page, name="datasets"),
    path("datasets/<str:name>/", views.dataset_page, name="dataset"),
    path("datasets/<str:name>/export.jsonl", views.dataset_export, name="dataset-export"),
    path("datasets/<str:name>/import/", views.dataset_import, name="dataset-import"),
    path("datasets/<str:name>/cases/new/", views.case_new, name="case-new"),
    path("cases/<int:case_id>/", views.case_page, name="case"),
    path("review/", views.review_page, name="review"),
]
