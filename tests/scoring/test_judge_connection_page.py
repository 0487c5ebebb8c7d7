"""The judge settings page's "Test connection": one real call to the saved judge (a real
HTTP server on loopback here), its outcome on the page, the key never shown, admins only."""

import pytest
from django.test import Client

from checks.judge import structured
from scoring.judge.services import judge_configure
from tests.scoring.judge_server import Behaviour, judge_server, raw, refused_url, says

KEY = "sk-conn-9f8e7d6c5b4a3210"
URL = "/p/acme/settings/judge/test/"
pytestmark = pytest.mark.django_db


@pytest.fixture
def judge():
    with judge_server() as server:
        yield server


def _configure(actors, endpoint, **extra):
    judge_configure(
        project=actors.acme, endpoint=endpoint, model="judge-model", api_key=KEY,
        criteria={"answer_relevance": "Relevant?"}, **extra,
    )  # fmt: skip


def _post(user):
    client = Client()
    client.force_login(user)
    return client.post(URL, follow=True)


def test_an_admin_sees_ok_with_the_models_score_reason_and_elapsed_ms(actors, judge):
    _configure(actors, judge.url)
    judge.script(says('{"score": 1, "reason": "The answer says OK."}', delay=0.05))
    response = _post(actors.alice)
    html = response.content.decode()
    assert response.status_code == 200
    result = html[html.index('id="connection-result"') :]
    assert '<span class="badge ok">OK</span>' in result and 'data-field="score">1.0<' in result
    assert "The answer says OK." in result
    elapsed = int(result.split('data-field="elapsed-ms">')[1].split(" ms")[0])
    assert 50 <= elapsed < 5000
    assert judge.count == 1
    sent = judge.requests[0]
    assert sent["path"] == "/v1/chat/completions" and sent["body"]["model"] == "judge-model"
    assert sent["headers"]["Authorization"] == f"Bearer {KEY}"
    assert KEY not in html


def test_an_unreachable_endpoint_shows_the_reason_and_its_message(actors):
    _configure(actors, refused_url())
    html = _post(actors.alice).content.decode()
    result = html[html.index('id="connection-result"') :]
    assert 'data-field="reason">unreachable<' in result
    assert "Connection refused" in result and "ms</strong>" in result
    assert "/v1/chat/completions</code>" in result


def test_an_http_error_shows_the_status_but_never_what_the_server_sent(actors, judge):
    _configure(actors, judge.url)
    judge.script(Behaviour(status=401, echo_authorization=True))
    html = _post(actors.alice).content.decode()
    assert 'data-field="reason">http_error<' in html and "HTTP 401" in html
    assert "bad key" not in html and KEY not in html


def test_a_service_that_is_not_a_judge_is_named_so_and_its_reply_is_not_shown(actors, judge):
    _configure(actors, judge.url)
    judge.script(raw(200, "SSH-2.0-OpenSSH_9.6 root:x:0:0:/root:/bin/bash"))
    html = _post(actors.alice).content.decode()
    assert 'data-field="reason">bad_response<' in html and "is not JSON" in html
    assert "OpenSSH" not in html and "root:x" not in html


@pytest.mark.parametrize("open_port", [True, False])
def test_with_private_addresses_refused_a_saved_loopback_judge_is_not_called_and_an_open_port_looks_like_a_closed_one(
    actors, judge, settings, open_port
):
    _configure(actors, judge.url if open_port else refused_url())  # saved while the server allowed it
    settings.EVALSITE_OUTBOUND_ALLOW_PRIVATE = False
    html = _post(actors.alice).content.decode()
    result = html[html.index('id="connection-result"') :]
    assert 'data-field="reason">address_refused<' in result
    assert "127.0.0.1 is a loopback address" in result and "Connection refused" not in result
    assert judge.count == 0


def test_a_rate_limit_and_a_prose_reply_are_named(actors, judge):
    _configure(actors, judge.url)
    # A Retry-After longer than the judge's timeout: no second call, the 429 is the outcome.
    judge.script(raw(429, '{"error": "slow down"}', headers={"Retry-After": "600"}), says("Sure, it says OK."))
    assert 'data-field="reason">rate_limited<' in _post(actors.alice).content.decode()
    prose = _post(actors.alice).content.decode()
    assert 'data-field="reason">prose_reply<' in prose and "Sure, it says OK." not in prose


def test_a_slow_judge_times_out_at_its_configured_timeout(actors, judge):
    _configure(actors, judge.url, timeout_seconds=1)
    judge.script(says('{"score": 1, "reason": "late"}', delay=3))
    html = _post(actors.alice).content.decode()
    assert 'data-field="reason">timeout<' in html
    elapsed = int(html.split('data-field="elapsed-ms">')[1].split(" ms")[0])
    assert 900 <= elapsed < 2500


def test_without_a_configured_judge_nothing_is_called(actors):
    html = _post(actors.alice).content.decode()
    assert "The judge is off: there is no endpoint and model to test." in html


def test_only_the_admins_who_may_save_may_test(actors, judge):
    _configure(actors, judge.url)
    assert _post(actors.bob).status_code == 403
    assert _post(actors.victor).status_code == 403
    assert _post(actors.charlie).status_code == 404
    assert judge.count == 0


def test_the_outcome_is_shown_once_after_a_redirect_and_a_reload_calls_nothing(actors, judge):
    _configure(actors, judge.url)
    judge.script(says('{"score": 1, "reason": "OK."}'))
    client = Client()
    client.force_login(actors.alice)
    response = client.post(URL)
    assert response.status_code == 302 and response["Location"] == "/p/acme/settings/judge/"
    assert 'id="connection-result"' in client.get(response["Location"]).content.decode()
    assert 'id="connection-result"' not in client.get(response["Location"]).content.decode()
    assert judge.count == 1


def test_the_test_is_a_post(actors, judge):
    _configure(actors, judge.url)
    client = Client()
    client.force_login(actors.alice)
    assert client.get(URL).status_code == 405
    page = client.get("/p/acme/settings/judge/").content.decode()
    assert 'action="/p/acme/settings/judge/test/"' in page and "Test connection</button>" in page
    assert judge.count == 0


def test_it_says_when_the_server_asked_to_try_again_and_refused_structured_output(actors, judge):
    structured.forget_refusals()
    _configure(actors, judge.url)
    judge.script(
        raw(400, '{"error": {"message": "Unknown parameter: response_format"}}'),
        raw(503, "warming up", headers={"Retry-After": "0"}),
        says('{"score": 1, "reason": "OK."}'),
    )
    html = _post(actors.alice).content.decode()
    structured.forget_refusals()
    assert '<span class="badge ok">OK</span>' in html
    assert 'data-field="attempts">3 calls<' in html
    assert "does not take structured output" in html
    assert judge.count == 3
