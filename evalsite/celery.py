"""The Celery app. Settings come from Django's (``CELERY_*``); tasks from each app."""

import os

from celery import Celery, signals

from evalsite.logs import task_finished, task_started

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalsite.settings")

app = Celery("evalsite")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

# One log line per task (evalsite.logs): how long it took and how it ended.
signals.task_prerun.connect(task_started, weak=False)
signals.task_postrun.connect(task_finished, weak=False)
