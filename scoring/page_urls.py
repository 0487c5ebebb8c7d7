"""Scoring pages of one project, under ``/p/<slug>/`` (see ``evalsite.pages`` for who may see what)."""

from django.urls import path

from scoring import views

urlpatterns = [
    path("passes/", views.pass_list_page, name="passes"),
    path("passes/<int:pass_id>/", views.pass_page, name="pass"),
    path("passes/<int:pass_id>/progress.json", views.pass_progress, name="pass-progress"),
    path("review/scores/", views.review_page, name="review-scores"),
]
