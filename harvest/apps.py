from django.apps import AppConfig


class HarvestConfig(AppConfig):
    name = "harvest"
    verbose_name = "Harvest: production failures grouped, and the golden set's coverage of them"
