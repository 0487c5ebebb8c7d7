from django.contrib.auth import views as auth_views
from django.urls import include, path

from evalsite import views
from scoring.judge import views as judge_views

urlpatterns = [
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("", views.home, name="home"),
    path("switch/", views.project_switch, name="project-switch"),
    path("p/<slug:slug>/settings/judge/", judge_views.judge_settings, name="judge-settings"),
    path("p/<slug:slug>/", include("datasets.page_urls")),
    path("p/<slug:slug>/", include("experiments.page_urls")),
    path("p/<slug:slug>/", include("scoring.page_urls")),
]
