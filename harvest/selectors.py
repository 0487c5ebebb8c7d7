"""Reads of failure groups, scoped to the project: a window's groups, one group with its runs, coverage.

A group's ``window_size`` is the number of its runs started in the window (the last
``window`` before now), ``previous_size`` the number in the window before it, and the
trend their difference. Lists hold the groups with at least one run in the window,
biggest first.

**Coverage.** A group is covered by a dataset when one of the dataset's active cases
came from a run of the group (its ``source_trace_id``), or has an input whose TF-IDF
cosine similarity (over the group's signature's vocabulary) to the group's centroid is
``COVERAGE_SIMILARITY`` or more: the same bar a run clears to join the group. A
dataset's coverage is the share of the window's failing runs that are in covered
groups.
"""

import re
from dataclasses import dataclass
from datetime import timedelta

from django.db.models import Count, Q
from django.utils import timezone

from datasets.models import CaseStatus, GoldenCase, Trace
from evalsite.errors import Invalid, NotFound
from harvest.grouping import SIMILARITY, cosine, input_text, texts_vectors
from harvest.models import FailureGroup, FailureMember, SignatureVocabulary

COVERAGE_SIMILARITY = SIMILARITY
WINDOW_DEFAULT = "7d"
WINDOW_MAX = timedelta(days=90)
_WINDOW = re.compile(r"^([1-9][0-9]{0,3})([hd])$")
BY_TRACE, BY_SIMILARITY = "source_trace_id", "similar_input"


def window_parse(text):
    """``7d`` or ``24h`` as a timedelta (1 hour to 90 days); ``Invalid`` naming ``window`` otherwise."""
    text = text or WINDOW_DEFAULT
    match = _WINDOW.match(text)
    if match:
        amount, unit = int(match.group(1)), match.group(2)
        window = timedelta(hours=amount) if unit == "h" else timedelta(days=amount)
        if window <= WINDOW_MAX:
            return window
    message = "must be a number of hours or days, from 1h to 90d (e.g. 24h, 7d)"
    raise Invalid(f"window {message}.", errors=[{"field": "window", "message": message}])


def group_list(*, project, window, signature="", scorer="", now=None):
    """The project's groups with runs in ``window``, annotated ``window_size`` and ``previous_size``, biggest first."""
    now = now or timezone.now()
    start, before = now - window, now - 2 * window
    groups = FailureGroup.objects.filter(project=project)
    if signature:
        groups = groups.filter(signature=signature)
    if scorer:
        groups = groups.filter(checks_text__contains=f",{scorer},")
    return (
        groups.annotate(
            window_size=Count("members", filter=Q(members__started_at__gte=start, members__started_at__lte=now)),
            previous_size=Count("members", filter=Q(members__started_at__gte=before, members__started_at__lt=start)),
        )
        .filter(window_size__gt=0)
        .order_by("-window_size", "-id")
    )


def group_get(*, project, group_id, window, now=None):
    """One group of the project, annotated like ``group_list`` (sizes 0 when it has no run in the window)."""
    now = now or timezone.now()
    start, before = now - window, now - 2 * window
    group = (
        FailureGroup.objects.filter(project=project, pk=group_id)
        .annotate(
            window_size=Count("members", filter=Q(members__started_at__gte=start, members__started_at__lte=now)),
            previous_size=Count("members", filter=Q(members__started_at__gte=before, members__started_at__lt=start)),
        )
        .first()
    )
    if group is None:
        raise NotFound(f"No failure group {group_id} in this project.")
    return group


def group_runs(group, *, window=None, now=None):
    """The group's runs (``Trace`` rows) newest first, those started in ``window`` when given."""
    members = FailureMember.objects.filter(group=group)
    if window is not None:
        now = now or timezone.now()
        members = members.filter(started_at__gte=now - window, started_at__lte=now)
    return Trace.objects.filter(pk__in=members.values("trace_id")).order_by("-started_at", "-pk")


def group_run_ids(group, *, window=None, limit):
    """The ids of the first ``limit`` of ``group_runs`` (a review queue of the group)."""
    return list(group_runs(group, window=window).values_list("pk", flat=True)[:limit])


def representatives_of(groups):
    """``{trace pk: Trace}`` of the representatives of ``groups`` (one query)."""
    pks = {pk for group in groups for pk in group.representatives}
    return {t.pk: t for t in Trace.objects.filter(pk__in=pks).only("pk", "trace_id", "input", "output", "started_at")}


@dataclass(frozen=True)
class Case:
    source_trace_id: str
    text: str


def _cases(project, dataset=None):
    cases = GoldenCase.objects.filter(dataset__project=project, status=CaseStatus.ACTIVE)
    if dataset is not None:
        cases = cases.filter(dataset=dataset)
    else:
        cases = cases.filter(dataset__archived=False)
    return [Case(s or "", input_text(i)) for s, i in cases.values_list("source_trace_id", "input")]


def groups_covered(*, project, groups, dataset=None):
    """``{group id: "source_trace_id" | "similar_input"}`` of the ``groups`` covered by ``dataset``'s active cases
    (by every active dataset of the project when ``dataset`` is None); uncovered groups are absent."""
    groups = list(groups)
    cases = _cases(project, dataset)
    if not groups or not cases:
        return {}
    sources = [c.source_trace_id for c in cases if c.source_trace_id]
    covered = {
        group_id: BY_TRACE
        for group_id in FailureMember.objects.filter(
            group_id__in=[g.pk for g in groups], trace__trace_id__in=sources
        ).values_list("group_id", flat=True)
    }
    rest = [g for g in groups if g.pk not in covered]
    signatures = {g.signature for g in rest}
    vocabularies = SignatureVocabulary.objects.filter(project=project, signature__in=signatures)
    texts = [c.text for c in cases]
    for signature, idf in vocabularies.values_list("signature", "idf"):
        vectors = [v for v in texts_vectors(texts, idf) if v]
        for group in (g for g in rest if g.signature == signature):
            if any(cosine(v, group.centroid) >= COVERAGE_SIMILARITY for v in vectors):
                covered[group.pk] = BY_SIMILARITY
    return covered


def dataset_coverage(*, dataset, window, now=None, uncovered_max=20):
    """The share of the window's failing runs in groups ``dataset`` covers, and its biggest uncovered groups.

    ``{"window_runs", "covered_runs", "share" (None with no failing run), "groups", "covered_groups",
    "uncovered": [group, biggest first, at most uncovered_max]}``.
    """
    groups = list(group_list(project=dataset.project, window=window, now=now))
    covered = groups_covered(project=dataset.project, groups=groups, dataset=dataset)
    total = sum(g.window_size for g in groups)
    covered_runs = sum(g.window_size for g in groups if g.pk in covered)
    for group in groups:
        group.covered_by = covered.get(group.pk)
    return {
        "window_runs": total,
        "covered_runs": covered_runs,
        "share": covered_runs / total if total else None,
        "groups": len(groups),
        "covered_groups": len(covered),
        "uncovered": [g for g in groups if g.pk not in covered][:uncovered_max],
    }
