"""An alert links exactly the runs that drove it; reviewers open them as an annotation queue."""

from django.test import Client

from monitors.evaluation import monitor_evaluate
from scoring.models import QueueFilter
from scoring.review.queue import queue_candidates
from tests.monitors.conftest import runs_create


def _client(user):
    client = Client()
    client.force_login(user)
    return client


def _fired(actors, monitor_create):
    runs = runs_create(actors.acme, prefix="bad", count=100, failing=40)
    runs_create(actors.acme, prefix="ci", count=50, failing=50, experiment="v2")
    alert = monitor_evaluate(monitor_id=monitor_create(actors.acme).pk)
    return alert, runs


def test_the_alert_page_lists_the_failing_runs_and_no_others(actors, monitor_create):
    alert, runs = _fired(actors, monitor_create)
    page = _client(actors.victor).get(f"/p/acme/alerts/{alert.pk}/").content.decode()
    assert "Runs that drove it (40)" in page
    assert all(f">{run.trace_id}</a>" in page for run in runs[:40])
    assert ">bad-40</a>" not in page and ">ci-0</a>" not in page
    assert "Review these runs in a queue" not in page  # viewers read


def test_a_reviewer_opens_the_alerts_runs_as_a_queue_of_exactly_those_runs(actors, monitor_create):
    alert, runs = _fired(actors, monitor_create)
    bob = _client(actors.bob)
    response = bob.post(f"/p/acme/alerts/{alert.pk}/queue/")
    queue = QueueFilter.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/p/acme/queue/{queue.pk}/"
    assert list(queue_candidates(queue).values_list("pk", flat=True)) == [run.pk for run in runs[:40]]
    # Opening it again reuses the queue.
    bob.post(f"/p/acme/alerts/{alert.pk}/queue/")
    assert QueueFilter.objects.count() == 1


def test_a_viewer_cannot_open_the_queue(actors, monitor_create):
    alert, _ = _fired(actors, monitor_create)
    assert _client(actors.victor).post(f"/p/acme/alerts/{alert.pk}/queue/").status_code == 403
    assert not QueueFilter.objects.exists()


def test_an_outsider_gets_404_for_an_alert(actors, monitor_create):
    alert, _ = _fired(actors, monitor_create)
    assert _client(actors.charlie).get(f"/p/acme/alerts/{alert.pk}/").status_code == 404
    assert _client(actors.charlie).get(f"/p/umbrella/alerts/{alert.pk}/").status_code == 404
