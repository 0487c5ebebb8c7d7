"""The annotation queue: saved filters of runs (or of cases), worked one item at a time.

A ``QueueFilter`` names which items a queue goes through: runs narrowed by dataset,
experiment, a failed or abstained scorer, the absence of a label of one config, or a
judge criterion the reviewers disagree with; or the cases of the project still waiting
for an expected answer (``cases_needing_answer``), narrowed by dataset. Items are taken
oldest first (by id), so every reviewer sees the same order. A queue may also hold a
fixed list of runs (``queue_for_runs``: the runs that drove a monitor's alert).

A reviewer takes an item with a **lease** (``QueueItem``): until it expires nobody else
is given that item. The claim is a conditional update on the item's row (``done`` is
false and the lease is free, expired or the reviewer's own), so of two reviewers racing
for one item exactly one wins and the other moves on to the next. A reviewer holds one
item per queue at a time: taking another frees the first. An item is ``done`` once it
is labelled, captured, edited or skipped in this queue; done items are shown to nobody
again and count towards the progress (``done`` of ``total``).
"""

from dataclasses import dataclass
from datetime import timedelta

from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from datasets.case_selectors import review_queue
from datasets.models import Dataset, Experiment, GoldenCase, Trace
from evalsite.errors import Invalid, NotFound
from scoring.judge.calibration import disagreeing_runs
from scoring.labels import label_scorer_id
from scoring.models import LabelConfig, QueueFilter, QueueItem, Score, ScoreSource
from scoring.selectors import runs_filter_by_scores

LEASE_SECONDS = 15 * 60
# How many open items a claim tries before giving up: each try lost is an item another
# reviewer took between our read and our update.
CLAIM_TRIES = 20
CASES_QUEUE_NAME = "Cases needing an expected answer"
_TEXT_FIELDS = (
    "name",
    "kind",
    "dataset",
    "experiment",
    "failed_scorer",
    "abstained_scorer",
    "unlabeled",
    "disagreement",
    "feedback",
)


class Outcome:
    LABELLED = "labelled"
    SKIPPED = "skipped"
    CAPTURED = "captured"
    EDITED = "edited"


@dataclass(frozen=True)
class Progress:
    done: int
    total: int

    @property
    def remaining(self):
        return self.total - self.done


# --- saved filters ----------------------------------------------------------------------


def queue_filter_list(*, project):
    return QueueFilter.objects.filter(project=project).select_related("dataset", "experiment", "unlabeled")


def queue_filter_get(*, project, queue_id):
    """The project's queue ``queue_id``; ``NotFound`` for a missing one and another project's alike."""
    queue = queue_filter_list(project=project).filter(pk=queue_id).first()
    if queue is None:
        raise NotFound(f"No queue {queue_id} in this project.")
    return queue


def queue_filter_create(*, project, data, by=None):
    """A new saved filter from ``data`` (names of the dataset, experiment, label config...).

    ``Invalid`` naming each field that names nothing of the project; nothing is written then.
    """
    data = {k: (data.get(k) or "").strip() for k in _TEXT_FIELDS}
    errors, fields = [], {"name": data["name"], "kind": data["kind"] or QueueFilter.Kind.RUNS}
    if not fields["name"] or len(fields["name"]) > 100:
        errors.append({"field": "name", "message": "must be 1 to 100 characters"})
    elif QueueFilter.objects.filter(project=project, name=fields["name"]).exists():
        errors.append({"field": "name", "message": "is already the name of a queue in this project"})
    if fields["kind"] not in QueueFilter.Kind.values:
        errors.append({"field": "kind", "message": "must be one of " + ", ".join(QueueFilter.Kind.values)})
    lookups = (
        ("dataset", Dataset.objects.filter(project=project, archived=False)),
        ("experiment", Experiment.objects.filter(project=project)),
        ("unlabeled", LabelConfig.objects.filter(project=project, archived=False)),
    )
    for field, rows in lookups:
        if data[field]:
            fields[field] = rows.filter(name=data[field]).first()
            if fields[field] is None:
                errors.append({"field": field, "message": f"no {field.replace('unlabeled', 'label config')} "
                               f"named {data[field]!r} in this project"})  # fmt: skip
    if (
        data["disagreement"]
        and not LabelConfig.objects.filter(project=project, name=data["disagreement"], criterion=True).exists()
    ):
        errors.append({"field": "disagreement", "message": f"no judge criterion named {data['disagreement']!r}"})
    for field in ("failed_scorer", "abstained_scorer", "disagreement"):
        if len(data[field]) > 100:
            errors.append({"field": field, "message": "must be at most 100 characters"})
        fields[field] = data[field][:100]
    if len(data["feedback"]) > 300 or (data["feedback"] and ":" not in data["feedback"]):
        errors.append({"field": "feedback", "message": "must be name:value of at most 300 characters (thumbs:false)"})
    fields["feedback"] = data["feedback"][:300]
    if errors:
        raise Invalid("The queue is invalid. Nothing was written.", errors=errors)
    return QueueFilter.objects.create(project=project, created_by=by, **fields)


def queue_for_cases(*, project, dataset=None):
    """The queue of the project's cases needing an expected answer, of ``dataset`` when given
    (created on first use; idempotent, also when two requests create it at once)."""
    name = f"{CASES_QUEUE_NAME}: {dataset.name}"[:100] if dataset is not None else CASES_QUEUE_NAME
    QueueFilter.objects.bulk_create(
        [QueueFilter(project=project, name=name, kind=QueueFilter.Kind.CASES_NEEDING_ANSWER, dataset=dataset)],
        ignore_conflicts=True,
    )
    return queue_filter_list(project=project).get(name=name)


def queue_for_disagreements(*, project, criterion, by=None):
    """The queue of runs where the reviewers disagree with judge criterion ``criterion`` (created on first use)."""
    name = f"Judge disagrees: {criterion}"[:100]
    queue = queue_filter_list(project=project).filter(name=name).first()
    return queue or queue_filter_create(project=project, data={"name": name, "disagreement": criterion}, by=by)


def queue_for_runs(*, project, name, run_ids, by=None):
    """The queue of exactly the runs ``run_ids`` (trace pks of the project), named ``name``
    (created on first use; idempotent, also when two requests create it at once). Runs
    deleted since, or of another project, are simply not in it."""
    name = name[:100]
    QueueFilter.objects.bulk_create(
        [QueueFilter(project=project, name=name, runs=[int(pk) for pk in run_ids], created_by=by)],
        ignore_conflicts=True,
    )
    return queue_filter_list(project=project).get(name=name)


# --- what a queue holds -----------------------------------------------------------------


def queue_candidates(queue):
    """The runs (or cases) the filter selects, oldest first: a queryset, done items included."""
    if queue.kind == QueueFilter.Kind.CASES_NEEDING_ANSWER:
        cases = review_queue(project=queue.project)
        return cases.filter(dataset_id=queue.dataset_id) if queue.dataset_id else cases
    traces = Trace.objects.filter(project=queue.project)
    if queue.runs is not None:
        traces = traces.filter(pk__in=queue.runs)
    if queue.dataset_id:
        traces = traces.filter(Q(case__dataset_id=queue.dataset_id) | Q(experiment__dataset_id=queue.dataset_id))
    if queue.experiment_id:
        traces = traces.filter(experiment_id=queue.experiment_id)
    traces = runs_filter_by_scores(
        traces, scorer_failed=queue.failed_scorer or None, scorer_abstained=queue.abstained_scorer or None,
        feedback=queue.feedback or None,
    )  # fmt: skip
    if queue.unlabeled_id:
        labels = Score.objects.filter(
            trace=OuterRef("pk"), source=ScoreSource.HUMAN, scorer=label_scorer_id(queue.unlabeled.name)
        )
        traces = traces.exclude(Exists(labels))
    if queue.disagreement:
        disagreeing = disagreeing_runs(project=queue.project, criterion=queue.disagreement)
        traces = traces.filter(pk__in=disagreeing.values("pk"))
    return traces.order_by("id")


def queue_item_load(queue, item):
    """The run (or case) ``item`` of this queue; ``NotFound`` otherwise."""
    if queue.kind == QueueFilter.Kind.CASES_NEEDING_ANSWER:
        found = GoldenCase.objects.select_related("dataset", "source_run").filter(
            dataset__project=queue.project, pk=item
        )
    else:
        found = Trace.objects.select_related("experiment", "case").filter(project=queue.project, pk=item)
    found = found.first()
    # An item of the project outside the filter (a hand-made address) is not this queue's,
    # unless it was worked here before and has left the filter since (a labelled run).
    belongs = found is not None and (
        queue_candidates(queue).filter(pk=item).exists() or QueueItem.objects.filter(queue=queue, item=item).exists()
    )
    if not belongs:
        raise NotFound(f"No item {item} in this queue.")
    return found


def _done(queue):
    return QueueItem.objects.filter(queue=queue, item=OuterRef("pk"), done=True)


def _held_by_others(queue, user, now):
    return QueueItem.objects.filter(queue=queue, item=OuterRef("pk"), lease_until__gt=now).exclude(claimed_by=user)


def queue_open(queue, *, user=None, now=None):
    """The items still to do: not done, and not held by a reviewer other than ``user`` (a queryset)."""
    now = now or timezone.now()
    return queue_candidates(queue).exclude(Exists(_done(queue))).exclude(Exists(_held_by_others(queue, user, now)))


def queue_first_open(queue):
    """The id of the first item still to do in ``queue`` (for one who only looks), or ``None``."""
    return queue_open(queue).values_list("pk", flat=True).first()


def queue_progress(queue):
    """``Progress``: items done in this queue, of those done plus those still to do (two counts in SQL)."""
    done = QueueItem.objects.filter(queue=queue, done=True).count()
    return Progress(done=done, total=done + queue_candidates(queue).exclude(Exists(_done(queue))).count())


def queue_item_state(queue, item):
    """The item's ``QueueItem`` row (its holder, lease and outcome), or None when nobody touched it."""
    return QueueItem.objects.select_related("claimed_by").filter(queue=queue, item=item).first()


# --- claims -------------------------------------------------------------------------------


def queue_claim_next(*, queue, user, lease_seconds=LEASE_SECONDS):
    """Take the next item for ``user`` and return its id, or None when nothing is left for them.

    The item ``user`` already holds (lease live, not done, still selected) is returned
    again with its lease renewed, so reloading the page does not move on. Otherwise the
    first open item (not done, not held by another reviewer) is claimed by a
    conditional update; an item lost to a faster reviewer is passed over.
    """
    now = timezone.now()
    held = (
        QueueItem.objects.filter(queue=queue, claimed_by=user, done=False, lease_until__gt=now)
        .order_by("-updated_at", "-id")
        .values_list("item", flat=True)
        .first()
    )
    if held is not None and queue_candidates(queue).filter(pk=held).exists():
        queue_claim(queue=queue, item=held, user=user, lease_seconds=lease_seconds)
        return held
    open_items = (
        queue_candidates(queue).exclude(Exists(_done(queue))).exclude(Exists(_held_by_others(queue, user, now)))
    )
    for item in open_items.values_list("pk", flat=True)[:CLAIM_TRIES]:
        if queue_claim(queue=queue, item=item, user=user, lease_seconds=lease_seconds):
            return item
    return None


def queue_claim(*, queue, item, user, lease_seconds=LEASE_SECONDS):
    """Hold ``item`` for ``user`` for ``lease_seconds``; True when held, False when another reviewer holds it.

    Safe under concurrency: the row is created under its unique constraint (a twin
    insert is ignored) and taken by one conditional update, whose row count decides.
    A done item is not claimed again. Taking it frees ``user``'s other holds in the queue.
    """
    now = timezone.now()
    QueueItem.objects.bulk_create([QueueItem(queue=queue, item=item)], ignore_conflicts=True)
    free = Q(lease_until__isnull=True) | Q(lease_until__lte=now) | Q(claimed_by=user)
    won = (
        QueueItem.objects.filter(free, queue=queue, item=item, done=False)
        .update(claimed_by=user, lease_until=now + timedelta(seconds=lease_seconds), updated_at=now)
    )  # fmt: skip
    if won:
        QueueItem.objects.filter(queue=queue, claimed_by=user, done=False).exclude(item=item).update(lease_until=None)
    return bool(won)


def queue_item_holder(queue, item, user):
    """The other reviewer holding ``item`` now (a live lease), or None."""
    state = queue_item_state(queue, item)
    if state is None or state.done or state.claimed_by_id in (None, user.pk):
        return None
    return state.claimed_by if state.lease_until and state.lease_until > timezone.now() else None


def queue_item_finish(*, queue, item, user, outcome):
    """Mark ``item`` done by ``user`` with ``outcome`` and free its lease. Idempotent: a done item keeps its
    first outcome. ``Invalid`` when another reviewer holds it now (their lease is respected)."""
    holder = queue_item_holder(queue, item, user)
    if holder is not None:
        raise Invalid(
            f"{holder.get_username()} is working on this item; take the next one.",
            errors=[{"field": "item", "message": f"is held by {holder.get_username()}"}],
        )
    now = timezone.now()
    QueueItem.objects.bulk_create([QueueItem(queue=queue, item=item)], ignore_conflicts=True)
    QueueItem.objects.filter(queue=queue, item=item, done=False).update(
        done=True, outcome=outcome, claimed_by=user, lease_until=None, updated_at=now
    )


def queue_previous(*, queue, user, before=None):
    """The item ``user`` finished in this queue most recently (before item ``before``), or None."""
    rows = QueueItem.objects.filter(queue=queue, claimed_by=user, done=True).order_by("-updated_at", "-id")
    if before is not None:
        current = rows.filter(item=before).first()
        rows = rows.exclude(item=before)
        if current is not None:
            rows = rows.filter(
                Q(updated_at__lt=current.updated_at) | Q(updated_at=current.updated_at, id__lt=current.id)
            )
    return rows.values_list("item", flat=True).first()
