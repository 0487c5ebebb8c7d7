import gc

from django.apps import AppConfig
from django.conf import settings


class EvalsiteConfig(AppConfig):
    name = "evalsite"
    verbose_name = "Projects and keys"

    def ready(self):
        # Every process (web, worker, command) collects cycles less often: see the setting.
        gc.set_threshold(settings.EVALSITE_GC_THRESHOLD, *gc.get_threshold()[1:])
