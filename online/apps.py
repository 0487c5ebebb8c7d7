from django.apps import AppConfig


class OnlineConfig(AppConfig):
    name = "online"
    verbose_name = "Online scoring of production runs"
