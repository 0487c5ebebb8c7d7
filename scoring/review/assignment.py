"""Team review: a queue's assignees, its reviewers per item, blind review, and each reviewer's turn.

A queue may name ``assignees`` (members of the project who may review; none: every
reviewer may), ask for ``reviewers_per_item`` labels of each item (1: the single
reviewer's queue of ``scoring.review.queue``, with its exclusive leases), and be
``blind``: on an item, a reviewer sees their own labels only, never the others'.

With more than one reviewer per item there is no exclusive lease: the queue hands a
reviewer the first item they have not reviewed (labelled or skipped) that still needs
reviewers. Each reviewer's turn is a ``QueueReview`` row, unique on (queue, item,
reviewer): two requests of one reviewer on one item record one turn (and the label
itself is one score per author), two reviewers on one item record one each. The count
of labelled turns is read under a lock on the item's ``QueueItem`` row, so the item
is marked done exactly when it reaches ``reviewers_per_item``, however turns race.
"""

from django.db import transaction
from django.db.models import Count, Exists, OuterRef

from evalsite.errors import Invalid
from evalsite.models import ROLE_RANK, Membership, Role
from scoring.labels import labels_write
from scoring.models import QueueFilter, QueueItem, QueueReview
from scoring.review.queue import Outcome, queue_candidates, queue_filter_create

REVIEWERS_MAX = 10
TEAM_FIELDS = ("assignees", "reviewers_per_item", "blind")


def is_team_queue(queue):
    """Whether ``queue`` asks for more than one reviewer per item (no exclusive leases then)."""
    return queue.reviewers_per_item > 1


def queue_team_clean(*, project, data):
    """The team fields of ``data`` that are given, checked: ``Invalid`` naming each bad one.

    ``assignees``: usernames of members who may review (reviewer or admin); ``reviewers_per_item``:
    1 to ``REVIEWERS_MAX``; ``blind``: true or false. Returns ``{field: value}`` (assignees as users).
    """
    errors, fields = [], {}
    if "reviewers_per_item" in data:
        count = data["reviewers_per_item"]
        if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= REVIEWERS_MAX:
            errors.append(
                {"field": "reviewers_per_item", "message": f"must be a whole number from 1 to {REVIEWERS_MAX}"}
            )
        fields["reviewers_per_item"] = count
    if "blind" in data:
        if not isinstance(data["blind"], bool):
            errors.append({"field": "blind", "message": "must be true or false"})
        fields["blind"] = data["blind"]
    if "assignees" in data:
        names = data["assignees"]
        if not isinstance(names, list | tuple) or not all(isinstance(n, str) for n in names):
            errors.append({"field": "assignees", "message": "must be a list of usernames"})
        else:
            fields["assignees"], unknown = _reviewing_members(project, names)
            if unknown:
                errors.append({"field": "assignees", "message": f"{unknown[0]!r} is not a reviewer of this project"})
    if errors:
        raise Invalid("The queue's team settings are invalid. Nothing was written.", errors=errors)
    return fields


def _reviewing_members(project, names):
    """``(users, unknown names)``: the project's members named, who may review (reviewer or admin)."""
    reviewing = [r for r, rank in ROLE_RANK.items() if rank >= ROLE_RANK[Role.REVIEWER]]
    members = Membership.objects.filter(project=project, role__in=reviewing, user__username__in=list(names))
    users = {m.user.username: m.user for m in members.select_related("user")}
    return [users[n] for n in dict.fromkeys(names) if n in users], [n for n in names if n not in users]


def queue_team_set(*, queue, fields):
    """Apply checked team ``fields`` (``queue_team_clean``) to ``queue``."""
    with transaction.atomic():
        for name in ("reviewers_per_item", "blind"):
            if name in fields:
                setattr(queue, name, fields[name])
        queue.save(update_fields=[n for n in ("reviewers_per_item", "blind") if n in fields] or None)
        if "assignees" in fields:
            queue.assignees.set(fields["assignees"])
    return queue


def queue_team_create(*, project, data, by=None):
    """A new queue from ``data``: its filter (``queue_filter_create``) and its team fields, all or nothing."""
    team = {k: data[k] for k in TEAM_FIELDS if k in data and data[k] is not None}
    errors = []
    try:
        fields = queue_team_clean(project=project, data=team)
    except Invalid as bad:
        errors, fields = bad.errors, {}
    if data.get("kind") == QueueFilter.Kind.CASES_NEEDING_ANSWER and (fields.get("reviewers_per_item") or 1) > 1:
        errors.append({"field": "reviewers_per_item", "message": "must be 1 for a queue of cases (one answer each)"})
    with transaction.atomic():
        try:
            queue = queue_filter_create(
                project=project, data={k: v for k, v in data.items() if k not in TEAM_FIELDS}, by=by
            )
        except Invalid as bad:
            raise Invalid(bad.detail, errors=[*bad.errors, *errors]) from None
        if errors:
            raise Invalid("The queue's team settings are invalid. Nothing was written.", errors=errors)
        return queue_team_set(queue=queue, fields=fields)


def queue_assignee_names(queue):
    return sorted(queue.assignees.values_list("username", flat=True))


def reviewer_members(*, project):
    """The usernames of the project's members who may review (assignee menus)."""
    rows = Membership.objects.filter(project=project, role__in=[Role.REVIEWER, Role.ADMIN])
    return sorted(rows.values_list("user__username", flat=True))


def queue_may_review(queue, user):
    """Whether ``user`` may take items of ``queue``: it names no assignees, or names them."""
    assignees = queue.assignees.all()
    return not assignees.exists() or assignees.filter(pk=user.pk).exists()


def _reviewed_by(queue, user):
    return QueueReview.objects.filter(queue=queue, item=OuterRef("pk"), reviewer=user)


def team_open(queue, user):
    """The items ``user`` may still review: not done, not reviewed by them, fewer labels than asked (a queryset)."""
    done = QueueItem.objects.filter(queue=queue, item=OuterRef("pk"), done=True)
    return queue_candidates(queue).exclude(Exists(done)).exclude(Exists(_reviewed_by(queue, user)))


def team_next(*, queue, user):
    """The id of the first item ``user`` should review in ``queue``, or None (nothing left, or not assigned)."""
    if not queue_may_review(queue, user):
        return None
    return team_open(queue, user).values_list("pk", flat=True).first()


def review_record(*, queue, item, user, outcome=Outcome.LABELLED):
    """Record ``user``'s turn on ``item`` (labelled or skipped); returns the item's labelled turns.

    Under a lock on the item's ``QueueItem`` row: the unique turn is inserted (a twin is
    ignored), then the labelled turns are counted, and the item is done once they reach
    ``reviewers_per_item``.
    """
    with transaction.atomic():
        QueueItem.objects.bulk_create([QueueItem(queue=queue, item=item)], ignore_conflicts=True)
        QueueItem.objects.select_for_update().filter(queue=queue, item=item).first()
        QueueReview.objects.bulk_create(
            [QueueReview(queue=queue, item=item, reviewer=user, outcome=outcome)], ignore_conflicts=True
        )
        labelled = QueueReview.objects.filter(queue=queue, item=item, outcome=Outcome.LABELLED).count()
        if labelled >= queue.reviewers_per_item:
            QueueItem.objects.filter(queue=queue, item=item, done=False).update(
                done=True, outcome=Outcome.LABELLED, claimed_by=user, lease_until=None
            )
    return labelled


def queue_label(*, queue, trace, user, values, comment=""):
    """``user`` labels run ``trace`` in ``queue`` (``values``: ``[(config, value)]``): the labels and their turn.

    ``Invalid`` naming ``item`` when the queue names assignees and ``user`` is not one. The
    labels and the turn are written together or not at all.
    """
    if not queue_may_review(queue, user):
        raise Invalid(
            "This queue is assigned to other reviewers.", errors=[{"field": "item", "message": "you are not assigned"}]
        )
    author = {"name": user.get_username(), "by": "user"}
    with transaction.atomic():
        scores = labels_write(project=queue.project, trace=trace, values=values, comment=comment, author=author)
        review_record(queue=queue, item=trace.pk, user=user)
    return scores


def team_progress_counts(queue):
    """``{item: labelled turns}`` of the queue's items that have any (for the adjudication and the page)."""
    rows = QueueReview.objects.filter(queue=queue, outcome=Outcome.LABELLED).values("item").annotate(n=Count("id"))
    return {row["item"]: row["n"] for row in rows}


def reviewers_of(queue, items=None):
    """``{item: [usernames]}``: who labelled each item in ``queue`` (of ``items`` when given)."""
    rows = QueueReview.objects.filter(queue=queue, outcome=Outcome.LABELLED)
    rows = rows.filter(item__in=list(items)) if items is not None else rows
    found = {}
    for item, name in rows.order_by("id").values_list("item", "reviewer__username"):
        found.setdefault(item, []).append(name)
    return found
