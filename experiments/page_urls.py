"""Experiment and gate pages of one project, under ``/p/<slug>/``."""

from django.urls import path

from experiments import views

urlpatterns = [
    path("experiments/", views.experiments_page, name="experiments"),
    path("experiments/compare/", views.compare_page, name="compare"),
    path("gate-runs/", views.gate_runs_page, name="gate-runs"),
    path("gate-runs/<int:gate_run_id>/", views.gate_run_page, name="gate-run"),
]
