"""Webhooks: each alert POSTed with a human text, signed, retried on failure, delivered once."""

import time

import orjson
import pytest
from django.test import override_settings

from monitors.evaluation import monitor_evaluate
from monitors.models import Delivery
from monitors.webhooks import DeliveryFailed, delivery_send, monitor_test_message, signature
from tests.live import ROOT
from tests.monitors.conftest import runs_create
from tests.monitors.receiver import webhook_receiver

SECRET = "k" * 32


def _fired_delivery(actors, monitor_create, url):
    runs_create(actors.acme, prefix="bad", count=200, failing=60)
    monitor = monitor_create(actors.acme, webhook_urls=[url], secret=SECRET)
    alert = monitor_evaluate(monitor_id=monitor.pk)
    return monitor, alert, Delivery.objects.get(alert=alert)


def test_it_sends_a_signed_body_with_a_human_text_and_the_structured_alert(actors, monitor_create):
    with webhook_receiver(secret=SECRET) as (url, received):
        _, alert, delivery = _fired_delivery(actors, monitor_create, url)
        assert delivery_send(delivery_id=delivery.pk) is True
    ((status, body, valid),) = received
    assert (status, valid) == (200, True)
    answer = orjson.loads(body)
    assert answer["event"] == "alert.fired"
    assert answer["text"].startswith("Monitor 'quality' fired: pass_rate of quality is 0.7")
    assert f"/p/acme/alerts/{alert.pk}/" in answer["text"]
    assert (answer["alert"]["n"], answer["alert"]["failing_runs"]) == (200, 60)
    assert answer["alert"]["trace_ids"][:2] == ["bad-0", "bad-1"]


def test_it_retries_a_5xx_and_never_sends_again_after_the_success(actors, monitor_create):
    with webhook_receiver(secret=SECRET, failures=2) as (url, received):
        _, _, delivery = _fired_delivery(actors, monitor_create, url)
        for _ in range(2):
            with pytest.raises(DeliveryFailed):
                delivery_send(delivery_id=delivery.pk)
        assert delivery_send(delivery_id=delivery.pk) is True
        assert delivery_send(delivery_id=delivery.pk) is True  # a retried task: nothing sent
    assert [(status, valid) for status, _, valid in received] == [(500, True), (500, True), (200, True)]
    delivery.refresh_from_db()
    assert (delivery.attempts, delivery.last_status, delivery.delivered_at is not None) == (3, 200, True)


def test_a_4xx_is_final_and_recorded(actors, monitor_create):
    with webhook_receiver(secret="not the monitor's") as (url, received):
        _, _, delivery = _fired_delivery(actors, monitor_create, url)  # answers 401 to a bad signature
        assert delivery_send(delivery_id=delivery.pk) is False
    delivery.refresh_from_db()
    assert (delivery.attempts, delivery.last_status, delivery.delivered_at) == (1, 401, None)
    assert [valid for _, _, valid in received] == [False]


def test_an_unreachable_url_is_a_transient_failure(actors, monitor_create):
    _, _, delivery = _fired_delivery(actors, monitor_create, "http://127.0.0.1:9/hook")
    with pytest.raises(DeliveryFailed):
        delivery_send(delivery_id=delivery.pk)
    delivery.refresh_from_db()
    assert delivery.attempts == 1 and delivery.last_error


def test_a_url_refused_by_the_address_rule_is_never_called(actors, monitor_create):
    with webhook_receiver(secret="x") as (url, received):
        _, _, delivery = _fired_delivery(actors, monitor_create, url)
        with override_settings(EVALSITE_OUTBOUND_ALLOW_PRIVATE=False):
            assert delivery_send(delivery_id=delivery.pk) is False
    assert received == []
    delivery.refresh_from_db()
    assert "loopback" in delivery.last_error


def test_an_alert_makes_one_delivery_per_url(actors, monitor_create):
    runs_create(actors.acme, prefix="bad", count=200, failing=60)
    monitor = monitor_create(actors.acme, webhook_urls=["http://127.0.0.1:9/a", "http://127.0.0.1:9/b"])
    alert = monitor_evaluate(monitor_id=monitor.pk)
    assert sorted(Delivery.objects.filter(alert=alert).values_list("url", flat=True)) == [
        "http://127.0.0.1:9/a", "http://127.0.0.1:9/b"
    ]  # fmt: skip


def test_a_test_message_is_signed_with_the_monitors_secret(actors, monitor_create):
    monitor = monitor_create(actors.acme)
    with webhook_receiver(secret=monitor.secret) as (url, received):
        monitor.webhook_urls = [url]
        monitor.save()
        (delivery,) = monitor_test_message(monitor=monitor)
        assert delivery_send(delivery_id=delivery.pk) is True
    ((status, body, valid),) = received
    assert (status, valid, orjson.loads(body)["event"]) == (200, True, "test")


def test_the_verification_snippet_of_the_docs_accepts_a_real_delivery(actors, monitor_create):
    text = (ROOT / "docs" / "monitors.md").read_text()
    snippet = text.split("### Verifying the signature")[1].split("```python")[1].split("```")[0]
    namespace = {}
    exec(snippet, namespace)
    verify = namespace["evalsite_signature_valid"]
    monitor = monitor_create(actors.acme)
    body = b'{"text": "hello"}'
    header = signature(monitor.secret, int(time.time()), body)
    assert verify(monitor.secret, header, body)
    assert not verify(monitor.secret, header, body + b" ")
    assert not verify(monitor.secret, signature(monitor.secret, int(time.time()) - 3600, body), body)
