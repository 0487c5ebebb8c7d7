from django.urls import path

from scoring import api

urlpatterns = [
    path("scorers", api.ScorerList.as_view(), name="api-scorers"),
    path("score", api.ScoreNow.as_view(), name="api-score"),
    path("passes", api.PassCollection.as_view(), name="api-passes"),
    path("passes/<int:pass_id>", api.PassDetail.as_view(), name="api-pass"),
]
