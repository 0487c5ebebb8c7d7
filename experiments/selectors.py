"""Reads of experiments and gate runs, scoped to one project (another project's is not found)."""

from evalsite.errors import NotFound
from experiments.models import Experiment, GateRun


def experiment_get(*, project, name, field="experiment"):
    experiment = Experiment.objects.select_related("dataset").filter(project=project, name=name).first()
    if experiment is None:
        raise NotFound(
            f"No experiment named {name!r} in this project.", errors=[{"field": field, "message": "unknown experiment"}]
        )
    return experiment


def experiment_list(*, project):
    return Experiment.objects.filter(project=project).select_related("dataset")


def gate_run_get(*, project, gate_run_id):
    gate_run = (
        GateRun.objects.select_related("dataset", "experiment", "baseline")
        .filter(project=project, pk=gate_run_id)
        .first()
    )
    if gate_run is None:
        raise NotFound(f"No gate run {gate_run_id} in this project.")
    return gate_run


def gate_run_list(*, project, dataset=None, experiment=None, verdict=None):
    runs = GateRun.objects.filter(project=project).select_related("dataset", "experiment", "baseline")
    if dataset:
        runs = runs.filter(dataset__name=dataset)
    if experiment:
        runs = runs.filter(experiment__name=experiment)
    if verdict:
        runs = runs.filter(verdict=verdict)
    return runs
