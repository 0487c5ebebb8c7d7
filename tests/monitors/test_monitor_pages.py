"""The monitor pages: everyone reads state, alerts and deliveries; admins send a test."""

from django.test import Client

from monitors.evaluation import monitor_evaluate
from monitors.models import Delivery, Monitor
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


LIST = "/p/acme/monitors/"
FORM = {"name": "quality", "metric": "pass_rate", "scorer": "quality", "target": "0.9", "window_minutes": "60",
        "min_runs": "30", "tags": "eu, prod", "webhook_urls": "http://127.0.0.1:9/a\nhttp://127.0.0.1:9/b"}  # fmt: skip


def test_an_admin_creates_a_monitor_from_the_list_page(actors):
    response = _client(actors.alice).post(LIST, FORM)
    monitor = Monitor.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/p/acme/monitors/{monitor.pk}/"
    assert (monitor.filter, monitor.direction) == ({"tags": ["eu", "prod"]}, "above")
    assert monitor.webhook_urls == ["http://127.0.0.1:9/a", "http://127.0.0.1:9/b"]


def test_a_refused_webhook_comes_back_next_to_its_field_and_nothing_is_made(actors):
    response = _client(actors.alice).post(LIST, {**FORM, "webhook_urls": "http://169.254.169.254/"})
    assert response.status_code == 400
    assert "item 1: may not be called: 169.254.169.254 is a cloud metadata address" in response.content.decode()
    assert not Monitor.objects.exists()


def test_everyone_sees_the_list_with_state_badges_and_only_admins_change(actors, monitor_create):
    monitor_create(actors.acme, state="firing")
    page = _client(actors.victor).get(LIST).content.decode()
    row = page.split('data-monitor="quality"')[1].split("</tr>")[0]
    assert '<span class="badge fail">firing</span>' in row and "Pause" not in row
    assert 'id="monitor-form"' not in page
    assert 'href="/p/acme/monitors/">Monitors</a>' in page


def test_an_admin_pauses_and_resumes_and_a_reviewer_cannot(actors, monitor_create):
    monitor = monitor_create(actors.acme)
    assert _client(actors.bob).post(f"/p/acme/monitors/{monitor.pk}/pause/").status_code == 403
    alice = _client(actors.alice)
    alice.post(f"/p/acme/monitors/{monitor.pk}/pause/")
    monitor.refresh_from_db()
    assert monitor.paused
    assert '<span class="badge">paused</span>' in alice.get(LIST).content.decode()
    alice.post(f"/p/acme/monitors/{monitor.pk}/pause/")
    monitor.refresh_from_db()
    assert not monitor.paused
