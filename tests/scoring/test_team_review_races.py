"""Team review under concurrent requests (PostgreSQL): one label per reviewer and item, one turn each.

Real requests through the pages, on threads of their own (each its own connection),
released together by a barrier. The unique constraint on (queue, item, reviewer) is what
holds: the last test drops it and the same requests then record a reviewer twice.
"""

import threading

import pytest
from django.db import connection
from django.test import Client

from evalsite.models import Role
from evalsite.projects import membership_set
from scoring.labels import label_config_create
from scoring.models import QueueItem, QueueReview, Score, ScoreSource
from scoring.review.assignment import queue_team_create
from tests.base import actors_create, user_create
from tests.factories import trace_create
from tests.scoring.races import in_thread

pytestmark = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="the race needs concurrent writers: PostgreSQL (DATABASE_URL)"
)
CONSTRAINT = "queuereview_unique_item_reviewer"


def _setup(reviewers_per_item):
    actors = actors_create()
    actors.dana = user_create("dana")
    membership_set(user=actors.dana, project=actors.acme, role=Role.REVIEWER)
    config = label_config_create(project=actors.acme, data={"name": "helpful"})
    run = trace_create(actors.acme, "only", output="an answer")
    queue = queue_team_create(
        project=actors.acme, data={"name": "team", "reviewers_per_item": reviewers_per_item, "blind": True}
    )
    return actors, config, run, queue


def _race(users, url, form):
    """POST ``form`` to ``url`` once per user in ``users``, all at once; the status codes."""
    barrier, codes = threading.Barrier(len(users)), []

    def post(user):
        client = Client()
        client.force_login(user)
        barrier.wait()
        codes.append(client.post(url, form).status_code)

    started = [in_thread(lambda u=u: post(u)) for u in users]
    for thread, _ in started:
        thread.join(timeout=60)
    errors = [e for _, errs in started for e in errs]
    assert errors == [], errors
    return codes


def test_two_requests_of_one_reviewer_on_one_item_store_one_label_and_one_turn(transactional_db):
    actors, config, run, queue = _setup(2)
    url = f"/p/acme/queue/{queue.pk}/items/{run.pk}/"
    codes = _race([actors.bob, actors.bob], url, {"action": "label", f"config_{config.pk}": "true"})
    assert codes == [302, 302]
    assert QueueReview.objects.filter(queue=queue, item=run.pk).count() == 1
    assert Score.objects.filter(trace=run, source=ScoreSource.HUMAN).count() == 1
    assert not QueueItem.objects.get(queue=queue, item=run.pk).done, "one reviewer twice is not two reviewers"


def test_two_reviewers_on_one_free_item_store_one_label_each_and_finish_it(transactional_db):
    actors, config, run, queue = _setup(2)
    url = f"/p/acme/queue/{queue.pk}/items/{run.pk}/"
    codes = _race([actors.bob, actors.dana], url, {"action": "label", f"config_{config.pk}": "false"})
    assert codes == [302, 302]
    turns = QueueReview.objects.filter(queue=queue, item=run.pk)
    assert sorted(turns.values_list("reviewer__username", flat=True)) == ["bob", "dana"]
    labels = Score.objects.filter(trace=run, source=ScoreSource.HUMAN)
    assert sorted(s.detail["author"] for s in labels) == ["bob", "dana"]
    assert QueueItem.objects.get(queue=queue, item=run.pk).done, "the second turn, whichever it was, finishes it"


def test_without_the_unique_constraint_one_reviewer_is_recorded_twice(transactional_db):
    """The control: the same race with the constraint dropped stores a reviewer's turn twice."""
    actors, config, run, queue = _setup(2)
    url = f"/p/acme/queue/{queue.pk}/items/{run.pk}/"
    with connection.cursor() as cursor:
        cursor.execute(f"ALTER TABLE scoring_queuereview DROP CONSTRAINT {CONSTRAINT}")
    try:
        _race([actors.bob, actors.bob], url, {"action": "label", f"config_{config.pk}": "true"})
        twice = QueueReview.objects.filter(queue=queue, item=run.pk).count()
        done = QueueItem.objects.get(queue=queue, item=run.pk).done
    finally:
        QueueReview.objects.all().delete()
        with connection.cursor() as cursor:
            cursor.execute(
                f"ALTER TABLE scoring_queuereview ADD CONSTRAINT {CONSTRAINT} UNIQUE (queue_id, item, reviewer_id)"
            )
    assert twice == 2 and done, "one reviewer counted as two: the item is done with a single reviewer's label"
