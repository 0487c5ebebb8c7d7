"""The monitor pages: everyone reads state, alerts and deliveries; admins send a test."""

from django.test import Client

from monitors.evaluation import monitor_evaluate
from monitors.models import Delivery
from tests.monitors.conftest import runs_create


def _client(user):
    client = Client()
    client.force_login(user)
    return client


def test_the_monitor_page_shows_state_interval_alerts_and_deliveries(actors, monitor_create):
    runs_create(actors.acme, prefix="bad", count=200, failing=60)
    monitor = monitor_create(actors.acme, webhook_urls=["http://127.0.0.1:9/hook"])
    alert = monitor_evaluate(monitor_id=monitor.pk)
    page = _client(actors.victor).get(f"/p/acme/monitors/{monitor.pk}/").content.decode()
    assert '<span class="badge fail">firing</span>' in page
    assert "200 runs, value 0.7" in page
    assert f'href="/p/acme/alerts/{alert.pk}/"' in page
    assert "<code>http://127.0.0.1:9/hook</code>" in page and "alert " + str(alert.pk) in page
    assert "Send a test" not in page and monitor.secret not in page  # viewers read, see no secret


def test_an_admin_sends_a_test_and_it_shows_in_the_delivery_log(actors, monitor_create):
    monitor = monitor_create(actors.acme, webhook_urls=["http://127.0.0.1:9/hook"])
    alice = _client(actors.alice)
    response = alice.post(f"/p/acme/monitors/{monitor.pk}/test/")
    assert response.status_code == 302
    assert Delivery.objects.filter(monitor=monitor, alert=None).count() == 1
    page = alice.get(f"/p/acme/monitors/{monitor.pk}/").content.decode()
    assert "<td>test</td>" in page and "Send a test" in page and monitor.secret in page


def test_a_reviewer_cannot_send_a_test(actors, monitor_create):
    monitor = monitor_create(actors.acme, webhook_urls=["http://127.0.0.1:9/hook"])
    assert _client(actors.bob).post(f"/p/acme/monitors/{monitor.pk}/test/").status_code == 403
    assert not Delivery.objects.exists()


def test_an_outsider_gets_404_for_a_monitor(actors, monitor_create):
    monitor = monitor_create(actors.acme)
    assert _client(actors.charlie).get(f"/p/acme/monitors/{monitor.pk}/").status_code == 404
