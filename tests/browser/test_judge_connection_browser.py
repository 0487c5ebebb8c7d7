"""An admin tests the judge's connection from its settings page, in a real browser.

The judge is a real OpenAI-compatible server on loopback (``tests.scoring.judge_server``).
"Test connection" is a plain form: it works with JavaScript off. The page shows OK with
the model's score, reason and elapsed ms, or the reason the call failed and its message;
the api key is never on it. Screenshots at 390 and 1440 px go to ``var/artifacts``, with an
axe-core check of the page showing each outcome.
"""

import pytest

from scoring.judge.services import judge_configure
from tests.base import actors_create
from tests.browser.conftest import axe_violations, log_in, no_js_page, overflow_px
from tests.scoring.judge_server import Behaviour, judge_server, refused_url, says

pytestmark = pytest.mark.browser

KEY = "sk-browser-0a1b2c3d4e5f6a7b"
SETTINGS = "/p/acme/settings/judge/"


@pytest.fixture
def acme(transactional_db):
    return actors_create()


@pytest.fixture
def judge():
    with judge_server() as server:
        yield server


def _configure(actors, endpoint):
    judge_configure(
        project=actors.acme, endpoint=endpoint, model="judge-model", api_key=KEY, timeout_seconds=5,
        criteria={"answer_relevance": "Does the answer address the question?"},
    )  # fmt: skip


def _checked(page, artifacts_dir, name):
    problems = []
    for width in (390, 1440):
        page.set_viewport_size({"width": width, "height": 900})
        if overflow_px(page) > 0:
            problems.append(f"{name} at {width}px is {overflow_px(page)}px too wide")
        page.screenshot(path=str(artifacts_dir / f"{name}-{width}.png"), full_page=True)
    problems += axe_violations(page)
    assert not problems, "\n".join(problems)
    assert KEY not in page.content()


def test_an_admin_tests_the_judge_and_reads_ok_then_the_failure(page, acme, judge, artifacts_dir):
    _configure(acme, judge.url)
    log_in(page, "alice", SETTINGS)
    judge.script(says('{"score": 1, "reason": "The answer says OK."}'))
    page.click("#connection-form button")
    result = page.locator("#connection-result")
    assert "OK" in result.inner_text() and "score 1.0" in result.inner_text()
    assert "The answer says OK." in result.inner_text() and " ms" in result.inner_text()
    assert judge.requests[-1]["headers"]["Authorization"] == f"Bearer {KEY}"
    _checked(page, artifacts_dir, "judge-connection-ok")

    judge.script(Behaviour(status=401, echo_authorization=True))
    page.click("#connection-form button")
    text = page.locator("#connection-result").inner_text()
    assert "http_error" in text and "HTTP 401" in text
    assert "[redacted]" not in page.content() and "Bearer" not in text  # what the server sent back is never shown
    _checked(page, artifacts_dir, "judge-connection-http-error")
    assert judge.count == 2

    page.fill("#id_model", "judge-model-2")  # saving from the page the test left works as before
    page.click("form.narrow-form button[type=submit]")
    page.wait_for_url(f"**{SETTINGS}")
    assert "The judge configuration was saved." in page.inner_text(".messages")
    assert judge.count == 2


def test_without_javascript_an_unreachable_judge_is_named(page, acme, live_server, artifacts_dir):
    _configure(acme, refused_url())
    plain = no_js_page(page, live_server)
    log_in(plain, "alice", SETTINGS)
    plain.click("#connection-form button")
    text = plain.locator("#connection-result").inner_text()
    assert "unreachable" in text and "Connection refused" in text
    assert KEY not in plain.content()
    plain.screenshot(path=str(artifacts_dir / "judge-connection-unreachable-1280.png"), full_page=True)


def test_a_reviewer_cannot_open_the_page_nor_post_the_test(page, acme, judge):
    _configure(acme, judge.url)
    log_in(page, "bob", "/p/acme/runs/")
    assert page.goto(SETTINGS).status == 403
    csrf = next(c["value"] for c in page.context.cookies() if c["name"] == "csrftoken")
    url = f"{page.url.split('/p/')[0]}{SETTINGS}test/"
    response = page.request.post(url, headers={"X-CSRFToken": csrf, "Referer": url})
    assert response.status == 403
    assert judge.count == 0
