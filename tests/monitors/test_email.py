"""E-mail of alerts: through Django's SMTP settings, one plain-text message per alert and
recipient, retried past a server's 451 and never sent twice; refused while e-mail is off."""

import uuid

import pytest
from celery import current_app
from django.test import Client, override_settings

from monitors.evaluation import monitor_evaluate
from monitors.models import Channel, Delivery, Monitor
from monitors.webhooks import DeliveryFailed, delivery_send
from tests.live import celery_worker, wait_for
from tests.monitors.conftest import runs_create
from tests.monitors.smtp import smtp_server

SMTP = "django.core.mail.backends.smtp.EmailBackend"
RECIPIENTS = ["oncall@example.com", "lead@example.org"]
BODY = {"name": "checkout quality", "metric": "pass_rate", "scorer": "quality", "target": 0.9}


def _mail_on(port):
    return override_settings(EMAIL_BACKEND=SMTP, EMAIL_HOST="127.0.0.1", EMAIL_PORT=port, EMAIL_TIMEOUT=5,
                             DEFAULT_FROM_EMAIL="alerts@evalsite.example", EVALSITE_PUBLIC_URL="https://ev.example")  # fmt: skip


def _fired(actors, monitor_create, recipients=RECIPIENTS):
    runs_create(actors.acme, prefix="bad", count=200, failing=60)
    monitor = monitor_create(actors.acme, email_recipients=recipients)
    return monitor, monitor_evaluate(monitor_id=monitor.pk)


def _send_until_done(delivery, tries=4):
    for _ in range(tries):
        try:
            return delivery_send(delivery_id=delivery.pk)
        except DeliveryFailed:
            continue
    raise AssertionError("not delivered")


def test_each_recipient_gets_exactly_one_plain_text_mail_after_a_451(actors, monitor_create):
    with smtp_server(failures=1) as (port, received), _mail_on(port):
        monitor, alert = _fired(actors, monitor_create)
        deliveries = list(Delivery.objects.filter(alert=alert).order_by("pk"))
        assert [(d.channel, d.address) for d in deliveries] == [(Channel.EMAIL, a) for a in RECIPIENTS]
        for delivery in deliveries:
            with pytest.raises(DeliveryFailed, match="451"):
                delivery_send(delivery_id=delivery.pk)
            assert delivery_send(delivery_id=delivery.pk) is True
            assert delivery_send(delivery_id=delivery.pk) is True  # a retried task: nothing sent
    assert sorted(to for to, _ in received) == sorted([a] for a in RECIPIENTS)
    message = received[0][1]
    assert message["Subject"] == "[evalsite] Monitor 'quality' fired"
    assert message["From"] == "alerts@evalsite.example"
    assert message.get_content_type() == "text/plain" and not message.is_multipart()
    text = message.get_content()
    assert text.startswith(f"{alert.text} https://ev.example/p/acme/alerts/{alert.pk}/")
    assert "Runs (n):     200" in text and "95% interval: 0.6332 to 0.7593" in text
    assert f"Window:       {alert.window_start:%Y-%m-%d %H:%M:%S} to {alert.window_end:%Y-%m-%d %H:%M:%S} UTC" in text
    assert "Failing runs: 60" in text and "<html" not in text.lower()
    for delivery in Delivery.objects.filter(alert=alert):
        assert (delivery.attempts, delivery.last_status, delivery.delivered_at is not None) == (2, 250, True)


def test_a_refused_address_is_final_and_recorded(actors, monitor_create):
    with smtp_server(refuse=["lead@example.org"]) as (port, received), _mail_on(port):
        _, alert = _fired(actors, monitor_create)
        refused = Delivery.objects.get(alert=alert, url="mailto:lead@example.org")
        assert delivery_send(delivery_id=refused.pk) is False
        assert _send_until_done(Delivery.objects.get(alert=alert, url="mailto:oncall@example.com")) is True
    refused.refresh_from_db()
    assert (refused.attempts, refused.last_status, refused.delivered_at) == (1, 550, None)
    assert "No such mailbox" in refused.last_error
    assert [to for to, _ in received] == [["oncall@example.com"]]


def test_an_unreachable_mail_server_is_a_transient_failure(actors, monitor_create):
    with _mail_on(9):
        _, alert = _fired(actors, monitor_create, recipients=["oncall@example.com"])
        delivery = Delivery.objects.get(alert=alert)
        with pytest.raises(DeliveryFailed):
            delivery_send(delivery_id=delivery.pk)
    delivery.refresh_from_db()
    assert delivery.attempts == 1 and delivery.last_error and delivery.delivered_at is None


def test_a_real_worker_retries_with_backoff_and_mails_each_recipient_once(transactional_db, actors, monitor_create):
    queue = f"test-{uuid.uuid4().hex[:12]}"
    # The deliveries are sent from this process when the alert commits: to the worker's queue.
    default_queue, current_app.conf.task_default_queue = current_app.conf.task_default_queue, queue
    try:
        with smtp_server(failures=2) as (port, received):
            env = {"EVALSITE_QUEUE": queue, "EVALSITE_WEBHOOK_BACKOFF_SECONDS": 1, "EMAIL_HOST": "127.0.0.1",
                   "EMAIL_PORT": port}  # fmt: skip
            with _mail_on(port), celery_worker(queue=queue, env=env):
                _, alert = _fired(actors, monitor_create)
                wait_for(
                    lambda: Delivery.objects.filter(alert=alert, delivered_at__isnull=False).count() == 2,
                    timeout=60, what="both e-mails delivered",
                )  # fmt: skip
    finally:
        current_app.conf.task_default_queue = default_queue
    assert sorted(to for to, _ in received) == sorted([a] for a in RECIPIENTS)
    assert all(d.attempts == 3 for d in Delivery.objects.filter(alert=alert))


def test_the_api_names_a_bad_address_and_writes_nothing(actors):
    with _mail_on(25):
        body = {**BODY, "email_recipients": ["oncall@example.com", "not an address", "oncall@example.com"]}
        response = actors.api().post("/v1/api/monitors", body, format="json")
    assert response.status_code == 400
    assert {e["field"] for e in response.json()["errors"]} == {"email_recipients[1]", "email_recipients[2]"}
    assert not Monitor.objects.exists()


def test_the_api_refuses_recipients_while_mail_is_off(actors, settings):
    settings.EMAIL_HOST = ""
    response = actors.api().post("/v1/api/monitors", {**BODY, "email_recipients": ["a@example.com"]}, format="json")
    assert response.status_code == 400
    (error,) = response.json()["errors"]
    assert error["field"] == "email_recipients" and "e-mail is off" in error["message"]
    assert actors.api().post("/v1/api/monitors", {**BODY, "email_recipients": []}, format="json").status_code == 201


def test_the_api_stores_and_changes_recipients_when_mail_is_on(actors):
    with _mail_on(25):
        response = actors.api().post("/v1/api/monitors", {**BODY, "email_recipients": RECIPIENTS}, format="json")
        assert response.status_code == 201 and response.json()["email_recipients"] == RECIPIENTS
        url = f"/v1/api/monitors/{response.json()['id']}"
        changed = actors.api().patch(url, {"email_recipients": ["x@example.com"]}, format="json")
    assert changed.json()["email_recipients"] == ["x@example.com"]


def _client(user):
    client = Client()
    client.force_login(user)
    return client


def test_the_pages_say_mail_is_off(actors, monitor_create, settings):
    settings.EMAIL_HOST = ""
    monitor = monitor_create(actors.acme, email_recipients=["a@example.com"])
    alice = _client(actors.alice)
    assert "E-mail is off on this server" in alice.get("/p/acme/monitors/").content.decode()
    page = alice.get(f"/p/acme/monitors/{monitor.pk}/").content.decode()
    assert "off on this server" in page and "nothing is sent to a@example.com" in page
    assert "Send a test" not in page


def test_the_form_takes_recipients_and_the_test_button_mails_them(actors):
    with smtp_server() as (port, received), _mail_on(port):
        alice = _client(actors.alice)
        form = {"name": "q", "metric": "pass_rate", "scorer": "quality", "target": "0.9", "window_minutes": "60",
                "min_runs": "30", "email_recipients": "oncall@example.com\nbad@"}  # fmt: skip
        refused = alice.post("/p/acme/monitors/", form)
        assert refused.status_code == 400 and "item 2: is not an e-mail address" in refused.content.decode()
        alice.post("/p/acme/monitors/", {**form, "email_recipients": "oncall@example.com"})
        monitor = Monitor.objects.get(name="q")
        assert monitor.email_recipients == ["oncall@example.com"]
        alice.post(f"/p/acme/monitors/{monitor.pk}/test/")
        (delivery,) = Delivery.objects.filter(monitor=monitor)
        assert delivery_send(delivery_id=delivery.pk) is True
        page = alice.get(f"/p/acme/monitors/{monitor.pk}/").content.decode()
    ((to, message),) = received
    assert to == ["oncall@example.com"] and message["Subject"] == "[evalsite] Test message from monitor 'q'"
    assert "e-mail <code>oncall@example.com</code>" in page
