"""Experiments, the versions runs are tagged with: created on first use, registered, read by name.

Reads are scoped to one project: another project's experiment is not found (404).
"""

from django.db import IntegrityError, transaction

from datasets.models import Experiment
from evalsite.errors import Conflict, NotFound


def experiment_get(*, project, name, field="experiment"):
    experiment = Experiment.objects.select_related("dataset").filter(project=project, name=name).first()
    if experiment is None:
        raise NotFound(
            f"No experiment named {name!r} in this project.", errors=[{"field": field, "message": "unknown experiment"}]
        )
    return experiment


def experiment_list(*, project, dataset_name=None):
    """The project's experiments, each with its dataset; only ``dataset_name``'s when it is given."""
    experiments = Experiment.objects.filter(project=project).select_related("dataset")
    return experiments.filter(dataset__name=dataset_name) if dataset_name else experiments


def experiment_names(*, project):
    """The names of the project's experiments, newest first (the pages' experiment pickers)."""
    return list(Experiment.objects.filter(project=project).order_by("-created_at").values_list("name", flat=True))


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


def experiment_register(*, project, name, dataset, metadata):
    """``(experiment, created)``; an existing one merges ``metadata`` and keeps its dataset."""
    with transaction.atomic():
        experiment = Experiment.objects.select_for_update().filter(project=project, name=name).first()
        if experiment is None:
            try:
                with transaction.atomic():
                    return Experiment.objects.create(
                        project=project, name=name, dataset=dataset, metadata=metadata
                    ), True
            except IntegrityError:
                experiment = Experiment.objects.select_for_update().get(project=project, name=name)
        if dataset is not None and experiment.dataset_id not in (None, dataset.pk):
            raise Conflict(
                f"Experiment {name!r} belongs to dataset {experiment.dataset.name!r}.",
                errors=[{"field": "dataset", "message": f"is {experiment.dataset.name!r} for this experiment"}],
            )
        experiment.metadata = {**experiment.metadata, **metadata}
        experiment.dataset = experiment.dataset or dataset
        experiment.save(update_fields=["metadata", "dataset"])
        return experiment, False
