"""The annotation queue: saved filters, the claim lease between two reviewers, progress, skip."""

import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from datasets.models import Dataset, GoldenCase
from evalsite.errors import Invalid, NotFound
from scoring.labels import label_config_create, label_write
from scoring.models import QueueItem
from scoring.review.queue import (
    Outcome,
    queue_candidates,
    queue_claim,
    queue_claim_next,
    queue_filter_create,
    queue_filter_get,
    queue_for_cases,
    queue_item_finish,
    queue_previous,
    queue_progress,
)
from tests.factories import trace_create


@pytest.fixture
def runs(actors):
    return [trace_create(actors.acme, f"r{i}") for i in range(1, 6)]


@pytest.fixture
def queue(actors, runs):
    return queue_filter_create(project=actors.acme, data={"name": "all runs"}, by=actors.bob)


def test_two_reviewers_are_given_different_runs(actors, runs, queue):
    bob_item = queue_claim_next(queue=queue, user=actors.bob)
    alice_item = queue_claim_next(queue=queue, user=actors.alice)
    assert (bob_item, alice_item) == (runs[0].pk, runs[1].pk)
    assert queue_claim(queue=queue, item=bob_item, user=actors.alice) is False
    assert queue_claim_next(queue=queue, user=actors.bob) == bob_item, "a reload keeps the reviewer's item"


def test_an_expired_lease_frees_the_run_for_another_reviewer(actors, runs, queue):
    bob_item = queue_claim_next(queue=queue, user=actors.bob)
    QueueItem.objects.filter(item=bob_item).update(lease_until=timezone.now() - timedelta(seconds=1))
    assert queue_claim_next(queue=queue, user=actors.alice) == bob_item


def test_taking_another_item_frees_the_first(actors, runs, queue):
    first = queue_claim_next(queue=queue, user=actors.bob)
    assert queue_claim(queue=queue, item=runs[3].pk, user=actors.bob)
    assert queue_claim_next(queue=queue, user=actors.alice) == first


def test_a_finished_item_is_shown_to_nobody_again_and_counts_as_progress(actors, runs, queue):
    assert queue_progress(queue).done == 0 and queue_progress(queue).total == 5
    item = queue_claim_next(queue=queue, user=actors.bob)
    queue_item_finish(queue=queue, item=item, user=actors.bob, outcome=Outcome.SKIPPED)
    assert queue_claim_next(queue=queue, user=actors.alice) == runs[1].pk
    assert queue_claim_next(queue=queue, user=actors.bob) == runs[2].pk
    progress = queue_progress(queue)
    assert (progress.done, progress.total, progress.remaining) == (1, 5, 4)
    assert queue_previous(queue=queue, user=actors.bob) == item
    assert queue_previous(queue=queue, user=actors.alice) is None


def test_nobody_finishes_an_item_another_reviewer_holds(actors, runs, queue):
    item = queue_claim_next(queue=queue, user=actors.bob)
    with pytest.raises(Invalid) as raised:
        queue_item_finish(queue=queue, item=item, user=actors.alice, outcome=Outcome.SKIPPED)
    assert "bob" in raised.value.detail
    assert not QueueItem.objects.filter(done=True).exists()


def test_an_unlabeled_queue_progresses_as_labels_are_given(actors, runs):
    config = label_config_create(project=actors.acme, data={"name": "helpful"})
    queue = queue_filter_create(project=actors.acme, data={"name": "to label", "unlabeled": "helpful"})
    item = queue_claim_next(queue=queue, user=actors.bob)
    label_write(project=actors.acme, trace=runs[0], config=config, value=True, author={"name": "bob", "by": "user"})
    queue_item_finish(queue=queue, item=item, user=actors.bob, outcome=Outcome.LABELLED)
    assert list(queue_candidates(queue).values_list("pk", flat=True)) == [r.pk for r in runs[1:]]
    assert (queue_progress(queue).done, queue_progress(queue).total) == (1, 5)


def test_a_filter_naming_nothing_of_the_project_is_refused_by_field(actors, runs):
    with pytest.raises(Invalid) as raised:
        queue_filter_create(
            project=actors.acme,
            data={"name": "bad", "dataset": "nope", "unlabeled": "nope", "disagreement": "nope", "kind": "x"},
        )
    fields = {e["field"] for e in raised.value.errors}
    assert fields == {"dataset", "unlabeled", "disagreement", "kind"}
    with pytest.raises(NotFound):
        queue_filter_get(
            project=actors.umbrella, queue_id=queue_filter_create(project=actors.acme, data={"name": "q"}).pk
        )


def test_the_cases_queue_holds_cases_without_an_expected_answer_by_dataset(actors):
    a = Dataset.objects.create(project=actors.acme, name="a")
    b = Dataset.objects.create(project=actors.acme, name="b")
    GoldenCase.objects.create(dataset=a, name="needs", input="q")
    GoldenCase.objects.create(dataset=a, name="has", input="q", expected_output="x")
    GoldenCase.objects.create(dataset=b, name="other", input="q")
    queue = queue_for_cases(project=actors.acme)
    assert queue_for_cases(project=actors.acme) == queue
    assert sorted(queue_candidates(queue).values_list("name", flat=True)) == ["needs", "other"]
    narrowed = queue_filter_create(
        project=actors.acme, data={"name": "a only", "kind": "cases_needing_answer", "dataset": "a"}
    )
    assert list(queue_candidates(narrowed).values_list("name", flat=True)) == ["needs"]


@pytest.mark.django_db(transaction=True)
def test_reviewers_racing_for_one_run_never_both_win(transactional_db):
    from tests.base import actors_create

    actors = actors_create()
    trace_create(actors.acme, "only")
    queue = queue_filter_create(project=actors.acme, data={"name": "one"})
    users = [actors.alice, actors.bob, actors.victor]
    results, barrier = {}, threading.Barrier(len(users))

    def take(user):
        barrier.wait()
        try:
            results[user.username] = queue_claim_next(queue=queue, user=user)
        finally:
            connection.close()

    threads = [threading.Thread(target=take, args=(u,)) for u in users]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    winners = [name for name, item in results.items() if item is not None]
    assert len(winners) == 1, results
    assert QueueItem.objects.get().claimed_by.username == winners[0]
