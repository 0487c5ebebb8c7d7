"""Failure groups kept up to date: a full build, the incremental update, and the tick that picks one.

``groups_build`` groups every failing production run started in the last
``HORIZON_DAYS`` (``harvest.loading``, ``harvest.grouping``) and replaces the project's
groups in one transaction. A new group keeps the id of the old group most of its runs
were in, so links to a group survive a rebuild while its runs stay together.

``groups_update`` reads the scores, abstentions and errored runs written since the
last look (ids above the marks of ``HarvestState``, less ``SCAN_MARGIN``), and places
each failing run they name: in the nearest group of its signature (``grouping.assign_many``
against the stored centroids and vocabulary), or in a new group. A run already placed
under the same signature is left where it is; one whose signature changed (a new check
failed on it) is moved. Everything happens under the state row's lock, in one
transaction that also moves the marks: a worker killed midway writes nothing, and the
next tick does the same work again. A run is in one group at most (a unique key), so
two ticks never place it twice.

``harvest_tick`` builds when the project was never built, a rebuild was asked for, or
more runs than ``STRAYS_MIN`` (or ``STRAYS_SHARE`` of the last build) started groups
of their own since the last build (the groups no longer describe the traffic);
otherwise it updates.
"""

from collections import Counter
from datetime import timedelta

from django.db import transaction
from django.db.models import F, Max
from django.utils import timezone

from datasets.models import RunStatus, Trace
from evalsite.bulk import datetime_adapter, rows_insert
from evalsite.models import Project
from harvest.grouping import REPRESENTATIVES, assign_many, runs_group, signature_groups
from harvest.loading import failures_load
from harvest.models import FailureGroup, FailureMember, HarvestState, SignatureVocabulary
from scoring.models import Abstention, AbstentionKind, Score, ScoreSource

HORIZON_DAYS = 90
SCAN_MARGIN = 2_000
TICK_BATCH = 20_000
STRAYS_MIN = 200
STRAYS_SHARE = 0.1
WRITE_BATCH = 5_000
MEMBER_COLUMNS = ("project_id", "group_id", "trace_id", "started_at", "similarity")


def _state_locked(project_id):
    HarvestState.objects.get_or_create(project_id=project_id)
    return HarvestState.objects.select_for_update().get(project_id=project_id)


def _marks(project_id):
    """The highest score, abstention and run ids of the project now."""
    return {
        "score_pk": Score.objects.filter(project_id=project_id).aggregate(m=Max("pk"))["m"] or 0,
        "abstention_pk": Abstention.objects.filter(project_id=project_id).aggregate(m=Max("pk"))["m"] or 0,
        "trace_pk": Trace.objects.filter(project_id=project_id).aggregate(m=Max("pk"))["m"] or 0,
    }


def _horizon(now=None):
    return (now or timezone.now()) - timedelta(days=HORIZON_DAYS)


def _group_row(project_id, group, failures):
    parts = failures[group.keys[0]].parts
    return FailureGroup(
        project_id=project_id, signature=group.signature, checks=parts["checks"], tools=parts["tools"],
        checks_text="," + ",".join(parts["checks"]) + ",", error_type=parts["error"], label=group.label[:200],
        centroid=group.centroid, representatives=group.representatives, reasons=group.reasons, size=len(group.keys),
    )  # fmt: skip


def _ids_kept(groups, old):
    """``{index of a new group: id of the old group most of its runs were in}``, biggest new groups first."""
    kept, taken = {}, set()
    for index, group in enumerate(groups):
        counts = Counter(old[key] for key in group.keys if key in old)
        for old_id, _ in counts.most_common():
            if old_id not in taken:
                kept[index] = old_id
                taken.add(old_id)
                break
    return kept


def _groups_write(project_id, groups, failures, kept):
    """Save the groups (the kept ones over their old rows); returns their rows, in the order of ``groups``."""
    rows = [_group_row(project_id, group, failures) for group in groups]
    for index, old_id in kept.items():
        rows[index].pk = old_id
    fields = ["signature", "checks", "tools", "checks_text", "error_type", "label", "centroid", "representatives",
              "reasons", "size", "updated_at"]  # fmt: skip
    now = timezone.now()
    for row in rows:
        row.updated_at = now
    FailureGroup.objects.bulk_update([r for r in rows if r.pk], fields, batch_size=500)
    FailureGroup.objects.bulk_create([r for r in rows if not r.pk], batch_size=500)
    return rows


def _members_write(project_id, pairs, failures):
    """Write ``(group id, trace pk, similarity)`` rows in bulk (COPY on PostgreSQL)."""
    adapt = datetime_adapter()
    rows = [
        (project_id, group_id, pk, adapt(failures[pk].started_at), similarity) for group_id, pk, similarity in pairs
    ]
    for start in range(0, len(rows), WRITE_BATCH):
        rows_insert(FailureMember._meta.db_table, MEMBER_COLUMNS, rows[start : start + WRITE_BATCH])


def _groups_and_members_write(project_id, groups, failures, kept):
    rows = _groups_write(project_id, groups, failures, kept)
    pairs = ((row.pk, key, 1.0) for row, group in zip(rows, groups, strict=True) for key in group.keys)
    _members_write(project_id, pairs, failures)


def groups_build(*, project_id, now=None):
    """Group every failing production run of the horizon again; returns the number of groups.

    Reads outside any lock (it may take a while), then writes under the state's lock in
    one transaction: the groups, their runs, the vocabularies, and the marks as they
    were *before* the runs were read, so runs scored meanwhile are placed by the next tick.
    """
    marks = _marks(project_id)
    failures = failures_load(project_id=project_id, since=_horizon(now))
    groups, vocabularies = runs_group([failure.run for failure in failures.values()])
    with transaction.atomic():
        state = _state_locked(project_id)
        old = dict(FailureMember.objects.filter(project_id=project_id).values_list("trace_id", "group_id"))
        kept = _ids_kept(groups, old)
        FailureMember.objects.filter(project_id=project_id).delete()
        FailureGroup.objects.filter(project_id=project_id).exclude(pk__in=list(kept.values())).delete()
        _groups_and_members_write(project_id, groups, failures, kept)
        SignatureVocabulary.objects.filter(project_id=project_id).delete()
        SignatureVocabulary.objects.bulk_create(
            SignatureVocabulary(project_id=project_id, signature=v.signature, idf=v.idf) for v in vocabularies
        )
        HarvestState.objects.filter(pk=state.pk).update(
            **marks, built_at=timezone.now(), runs_at_build=len(failures), strays_since_build=0,
            rebuild_requested=False,
        )  # fmt: skip
    return len(groups)


def _touched(project_id, state):
    """The runs named by scores, abstentions and errored runs above the marks; and the new marks."""
    scores = (
        Score.objects.filter(project_id=project_id, pk__gt=max(0, state.score_pk - SCAN_MARGIN))
        .exclude(source=ScoreSource.HUMAN)
        .order_by("pk")
        .values_list("pk", "trace_id", "passed")[:TICK_BATCH]
    )
    abstentions = (
        Abstention.objects.filter(project_id=project_id, pk__gt=max(0, state.abstention_pk - SCAN_MARGIN))
        .filter(kind=AbstentionKind.ABSTAINED)
        .order_by("pk")
        .values_list("pk", "trace_id")[:TICK_BATCH]
    )
    errored = (
        Trace.objects.filter(project_id=project_id, pk__gt=max(0, state.trace_pk - SCAN_MARGIN))
        .order_by("pk")
        .values_list("pk", "status")[:TICK_BATCH]
    )
    scores, abstentions, errored = list(scores), list(abstentions), list(errored)
    touched = {pk for _, pk, passed in scores if not passed} | {pk for _, pk in abstentions}
    touched |= {pk for pk, status in errored if status == RunStatus.ERROR}
    marks = {
        "score_pk": max([state.score_pk, *(row[0] for row in scores)]),
        "abstention_pk": max([state.abstention_pk, *(row[0] for row in abstentions)]),
        "trace_pk": max([state.trace_pk, *(row[0] for row in errored)]),
    }
    return touched, marks


def _moved(project_id, failures):
    """The failures to place: not placed yet, or placed under another signature (those leave their group)."""
    placed = {
        pk: (member_pk, group_id, signature)
        for pk, member_pk, group_id, signature in FailureMember.objects.filter(trace_id__in=list(failures)).values_list(
            "trace_id", "pk", "group_id", "group__signature"
        )
    }
    leaving = [(member_pk, group_id) for pk, (member_pk, group_id, sig) in placed.items()
               if sig != failures[pk].run.signature]  # fmt: skip
    if leaving:
        FailureMember.objects.filter(pk__in=[m for m, _ in leaving]).delete()
        for group_id, n in Counter(g for _, g in leaving).items():
            FailureGroup.objects.filter(pk=group_id).update(size=F("size") - n)
    stay = {pk for pk, (_, _, sig) in placed.items() if sig == failures[pk].run.signature}
    return [failure for pk, failure in failures.items() if pk not in stay]


def _new_signature(project_id, signature, batch, failures):
    """Runs of a signature never built: grouped among themselves, with a vocabulary of their own."""
    groups, vocabulary = signature_groups(signature, [f.run for f in batch])
    SignatureVocabulary.objects.create(project_id=project_id, signature=signature, idf=vocabulary.idf)
    _groups_and_members_write(project_id, groups, failures, {})


def _known_signature(project_id, signature, idf, batch, failures):
    """Runs of a built signature: each to the nearest group; the rest grouped among themselves into new groups
    (their new words join the vocabulary, the known ones keep their idf). Returns the runs in new groups."""
    existing = FailureGroup.objects.filter(project_id=project_id, signature=signature)
    centroids = {g.pk: g.centroid for g in existing.only("pk", "centroid")}
    placed = assign_many([f.run.text for f in batch], idf, centroids)
    pairs = [(key, f.pk, similarity) for f, (key, similarity) in zip(batch, placed, strict=True) if key is not None]
    _members_write(project_id, pairs, failures)
    joined = Counter(group_id for group_id, _, _ in pairs)
    for group_id, n in joined.items():
        FailureGroup.objects.filter(pk=group_id).update(size=F("size") + n, updated_at=timezone.now())
    _representatives_top_up(list(joined), pairs)
    strays = [f for f, (key, _) in zip(batch, placed, strict=True) if key is None]
    if strays:
        groups, vocabulary = signature_groups(signature, [f.run for f in strays])
        _groups_and_members_write(project_id, groups, failures, {})
        SignatureVocabulary.objects.filter(project_id=project_id, signature=signature).update(
            idf={**vocabulary.idf, **idf}
        )
    return len(strays)


def _representatives_top_up(group_ids, pairs):
    """Groups with fewer than three representatives take the runs that just joined them."""
    for group in FailureGroup.objects.filter(pk__in=group_ids).only("pk", "representatives"):
        if len(group.representatives) < REPRESENTATIVES:
            new = [pk for group_id, pk, _ in pairs if group_id == group.pk and pk not in group.representatives]
            group.representatives = (group.representatives + new)[:REPRESENTATIVES]
            group.save(update_fields=["representatives"])


def groups_update(*, project_id, now=None):
    """Place the failing runs scored since the last look; returns how many were placed. Safe to run twice."""
    with transaction.atomic():
        state = _state_locked(project_id)
        touched, marks = _touched(project_id, state)
        failures = {}
        if touched:
            failures = failures_load(project_id=project_id, since=_horizon(now), pks=touched)
        to_place = _moved(project_id, failures) if failures else []
        by_signature = {}
        for failure in to_place:
            by_signature.setdefault(failure.run.signature, []).append(failure)
        vocabularies = dict(
            SignatureVocabulary.objects.filter(project_id=project_id, signature__in=list(by_signature)).values_list(
                "signature", "idf"
            )
        )
        strays = 0
        for signature, batch in by_signature.items():
            if signature in vocabularies:
                strays += _known_signature(project_id, signature, vocabularies[signature], batch, failures)
            else:
                _new_signature(project_id, signature, batch, failures)
        HarvestState.objects.filter(pk=state.pk).update(**marks, strays_since_build=F("strays_since_build") + strays)
    return len(to_place)


def rebuild_due(state):
    """Whether the next tick rebuilds (see the module's docstring)."""
    if state.built_at is None or state.rebuild_requested:
        return True
    return state.strays_since_build > max(STRAYS_MIN, STRAYS_SHARE * state.runs_at_build)


def harvest_tick(*, project_id, now=None):
    """Build or update one project's groups; returns ``("built", groups)`` or ``("updated", runs placed)``."""
    state, _ = HarvestState.objects.get_or_create(project_id=project_id)
    if rebuild_due(state):
        return "built", groups_build(project_id=project_id, now=now)
    return "updated", groups_update(project_id=project_id, now=now)


def harvest_tick_all():
    """One tick of every project; returns ``{project id: (what, n)}``."""
    return {pk: harvest_tick(project_id=pk) for pk in Project.objects.values_list("pk", flat=True)}


def rebuild_request(*, project):
    """Ask for a full rebuild of ``project``'s groups, done by a worker (``harvest.build``) after the commit."""
    from harvest.tasks import groups_build_task

    HarvestState.objects.get_or_create(project=project)
    HarvestState.objects.filter(project=project).update(rebuild_requested=True)
    transaction.on_commit(lambda: groups_build_task.delay(project.pk))
