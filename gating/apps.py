from django.apps import AppConfig


class GatingConfig(AppConfig):
    """The gate: policies and their revisions, gate runs, comparison and case history.

    The label stays ``experiments`` (the app's earlier name), so its tables, migrations
    and queued task names are unchanged.
    """

    name = "gating"
    label = "experiments"
    verbose_name = "The gate"
