"""A run's experiment, golden case and trial, from ``evalsite.*`` attributes on its spans.

``evalsite.experiment`` names the experiment (created on first use, like the runs API
does). ``evalsite.case`` names the golden case the run answers: an integer attribute is
a case id; a string is a case name, looked up in ``evalsite.dataset`` or else in the
experiment's dataset; a string of digits with no dataset to look in is taken as an id.

``evalsite.trial`` is which try of its case the run is, as the runs API's ``trial``: an
integer from 1 to ``MAX_TRIAL`` (a string of digits too, since ``OTEL_RESOURCE_ATTRIBUTES``
can only say text).

A name that matches nothing, or a trial that is not one, does not lose the run: the run is stored without that link
and the problem is returned as a warning (the endpoint sends it back in
``partialSuccess.errorMessage``). The links are recomputed whenever spans of the run
arrive, so a run sent before its case existed is linked by the next export.
"""

from datasets.experiments import experiments_ensure
from datasets.models import Dataset, GoldenCase
from datasets.run_schema import MAX_TRIAL

_MAX_EXPERIMENT = 200
_MAX_DATASET = 100


def links_resolve(*, project, hints):
    """``({trace_pk: (experiment, case, trial)}, warnings)`` for ``{trace_pk: (trace_id, hint dict)}``.

    Creates experiments that do not exist yet (safe under concurrency, see
    ``experiments_ensure``). Reads only the project's datasets and cases.
    """
    warnings = []
    wanted = {}  # trace_pk -> (experiment name, dataset name, case)
    for pk, (trace_id, hint) in hints.items():
        experiment = _name(hint.get("evalsite.experiment"), _MAX_EXPERIMENT)
        dataset = _name(hint.get("evalsite.dataset"), _MAX_DATASET)
        case = hint.get("evalsite.case")
        if hint.get("evalsite.experiment") is not None and experiment is None:
            warnings.append(f"run {trace_id}: evalsite.experiment must be a name of 1 to {_MAX_EXPERIMENT} characters")
        if isinstance(case, bool) or not isinstance(case, int | str) or (isinstance(case, str) and not case.strip()):
            if case is not None:
                warnings.append(f"run {trace_id}: evalsite.case must be a case id or a case name")
            case = None
        wanted[pk] = (experiment, dataset, case.strip() if isinstance(case, str) else case)

    dataset_names = {d for _, d, _ in wanted.values() if d}
    datasets = {d.name: d for d in Dataset.objects.filter(project=project, name__in=dataset_names)}
    for pk, (_, dataset, _) in wanted.items():
        if dataset and dataset not in datasets:
            warnings.append(f"run {hints[pk][0]}: no dataset named {dataset!r} in this project")

    experiment_datasets = {}
    for experiment, dataset, _ in wanted.values():
        if experiment and experiment_datasets.get(experiment) is None:
            experiment_datasets[experiment] = datasets.get(dataset)
    # Sorted: two requests creating the same experiments insert them in the same order.
    experiments = experiments_ensure(
        project=project, datasets_by_name=dict(sorted(experiment_datasets.items(), key=lambda item: item[0]))
    )

    links = {}
    for pk, (experiment_name, dataset_name, case) in wanted.items():
        experiment = experiments.get(experiment_name)
        dataset = datasets.get(dataset_name) or (experiment.dataset if experiment else None)
        found, problem = _case_find(project, case, dataset)
        if problem:
            warnings.append(f"run {hints[pk][0]}: {problem}; the run is stored without a case")
        trial, problem = trial_parse(hints[pk][1].get("evalsite.trial"))
        if problem:
            warnings.append(f"run {hints[pk][0]}: {problem}; the run is stored without a trial")
        links[pk] = (experiment, found, trial)
    return links, warnings


def trial_parse(value):
    """``(trial or None, problem or None)`` for an ``evalsite.trial`` attribute value."""
    if value is None:
        return None, None
    number = None
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    elif isinstance(value, str) and value.strip().isdigit() and len(value.strip()) <= 10:
        number = int(value.strip())
    if number is None or not 1 <= number <= MAX_TRIAL:
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:39] + "…"
        return None, f"evalsite.trial must be an integer from 1 to {MAX_TRIAL}, not {shown}"
    return number, None


def _name(value, limit):
    if not isinstance(value, str):
        return None
    value = value.strip()
    return value if 0 < len(value) <= limit else None


def _case_find(project, case, dataset):
    if case is None:
        return None, None
    if isinstance(case, str) and dataset is not None:
        found = GoldenCase.objects.filter(dataset=dataset, name=case).first()
        return (found, None) if found else (None, f"no case named {case!r} in dataset {dataset.name!r}")
    if isinstance(case, str) and not case.isdigit():
        return None, (
            f"evalsite.case names case {case!r} by name; set evalsite.dataset too "
            "(or use an experiment that has a dataset)"
        )
    case_id = int(case)
    found = GoldenCase.objects.filter(dataset__project=project, pk=case_id).first() if 0 < case_id < 2**63 else None
    return (found, None) if found else (None, f"no case {case_id} in this project")
