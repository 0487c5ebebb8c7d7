"""Writes of experiments."""

from django.db import transaction

from experiments.models import Experiment


def experiments_ensure(*, project, datasets_by_name):
    """The experiments named by ``datasets_by_name`` (name -> Dataset or None), created if missing.

    Returns ``{name: Experiment}``. A new experiment takes the dataset given for it; an
    existing one keeps its own. Safe under concurrency: a name created meanwhile by
    another request is read back, not duplicated.
    """
    if not datasets_by_name:
        return {}
    with transaction.atomic():
        experiments = Experiment.objects.select_related("dataset").filter(project=project)
        found = {e.name: e for e in experiments.filter(name__in=list(datasets_by_name))}
        missing = [name for name in datasets_by_name if name not in found]
        if missing:
            Experiment.objects.bulk_create(
                [Experiment(project=project, name=name, dataset=datasets_by_name[name]) for name in missing],
                ignore_conflicts=True,
            )
            found.update({e.name: e for e in experiments.filter(name__in=missing)})
    return found
