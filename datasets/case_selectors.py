"""Reads of datasets and golden cases, always scoped to one project.

A dataset or case of another project is simply not found (``NotFound``, 404), the
same answer as one that does not exist. Lists are querysets for cursor pagination;
counts are computed in SQL, one query per list.
"""

from django.db.models import Count, Q

from datasets.case_validation import DATASET_NAME_PATTERN
from datasets.models import CaseRevision, CaseStatus, Dataset, GoldenCase
from evalsite.errors import NotFound

ALL_STATUSES = "all"


def dataset_list(*, project, include_archived=True):
    """The project's datasets by name, each with ``active_cases``, ``draft_cases``,
    ``archived_cases`` and ``cases_needing_expected_output`` counted in the same query."""
    datasets = Dataset.objects.filter(project=project)
    if not include_archived:
        datasets = datasets.filter(archived=False)
    return datasets.annotate(
        active_cases=Count("cases", filter=Q(cases__status=CaseStatus.ACTIVE)),
        draft_cases=Count("cases", filter=Q(cases__status=CaseStatus.DRAFT)),
        archived_cases=Count("cases", filter=Q(cases__status=CaseStatus.ARCHIVED)),
        cases_needing_expected_output=Count(
            "cases", filter=Q(cases__expected_output__isnull=True) & ~Q(cases__status=CaseStatus.ARCHIVED)
        ),
    ).order_by("name")


def dataset_get(*, project, name, counted=False):
    if not DATASET_NAME_PATTERN.match(name):
        # No dataset can have this name; answered before it reaches the database
        # (PostgreSQL refuses some characters, such as NUL, in a query).
        raise NotFound(f"No dataset named {name!r} in this project.")
    datasets = dataset_list(project=project) if counted else Dataset.objects.filter(project=project)
    dataset = datasets.select_related("project").filter(name=name).first()
    if dataset is None:
        raise NotFound(f"No dataset named {name!r} in this project.")
    return dataset


def case_list(*, dataset, status=CaseStatus.ACTIVE, needs_expected_output=None):
    """The dataset's cases with ``status`` (or every status with ``"all"``), in id order."""
    cases = GoldenCase.objects.filter(dataset=dataset).select_related("dataset")
    if status != ALL_STATUSES:
        cases = cases.filter(status=status)
    if needs_expected_output is not None:
        cases = cases.filter(expected_output__isnull=needs_expected_output)
    return cases.order_by("id")


def case_get(*, project, case_id):
    case = GoldenCase.objects.select_related("dataset").filter(dataset__project=project, pk=case_id).first()
    if case is None:
        raise NotFound(f"No case {case_id} in this project.")
    return case


def case_revisions(*, case):
    """Every revision of ``case``, newest first, with who made it."""
    return CaseRevision.objects.filter(case=case).select_related("changed_by", "changed_by_key").order_by("-version")


def review_queue(*, project, dataset=None):
    """Cases of the project still waiting for an expected answer (archived ones aside), oldest first.

    Only ``dataset``'s when it is given.
    """
    cases = (
        GoldenCase.objects.filter(dataset__project=project, dataset__archived=False, expected_output__isnull=True)
        .exclude(status=CaseStatus.ARCHIVED)
        .select_related("dataset")
        .order_by("id")
    )
    return cases.filter(dataset=dataset) if dataset is not None else cases


def cases_from_run(*, project, trace_id):
    """The cases of any dataset of the project captured from the run ``trace_id``."""
    return (
        GoldenCase.objects.filter(dataset__project=project, source_trace_id=trace_id)
        .select_related("dataset")
        .order_by("dataset__name", "id")
    )


def case_recent_runs(*, case, limit):
    """The ``limit`` newest runs of ``case``'s experiments (newest first), each with its experiment."""
    return list(case.runs.select_related("experiment").order_by("-started_at", "-id")[:limit])
