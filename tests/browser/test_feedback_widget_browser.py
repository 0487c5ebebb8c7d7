"""The feedback widget of docs/feedback.md, run as written from a page of another origin.

The page is served by a plain HTTP server on 127.0.0.1 (an origin of its own); evalsite
is the live server on localhost. Chromium sends the preflight and the POST exactly as a
user's browser would: the listed origin's thumbs down lands on the run, and an origin
the project does not list is stopped by the browser (the preflight is refused).
"""

import functools
import http.server
import re
import threading
from pathlib import Path

import pytest

from evalsite.models import Project
from evalsite.projects import api_key_create
from scoring.models import Score
from tests.base import actors_create
from tests.browser.conftest import axe_violations, log_in
from tests.factories import trace_create
from tests.live import free_port

pytestmark = pytest.mark.browser

DOC = Path(__file__).resolve().parents[2] / "docs" / "feedback.md"


def _widget_html(evalsite_url, key):
    snippet = re.search(r"## A widget to copy.*?```html\n(.*?)```", DOC.read_text(), re.S).group(1)
    assert 'const EVALSITE = "https://evals.example.com"' in snippet and "esk_your_feedback_key" in snippet
    snippet = snippet.replace("https://evals.example.com", evalsite_url).replace("esk_your_feedback_key", key)
    return (
        f"<!doctype html><html lang=en><head><meta charset=utf-8><title>app</title></head><body>{snippet}</body></html>"
    )


@pytest.fixture
def app_origin(tmp_path):
    """A static web server on 127.0.0.1 serving ``tmp_path``: the app's own origin."""
    port = free_port()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{port}", tmp_path
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def widget_page(transactional_db, live_server, app_origin):
    origin, folder = app_origin
    actors = actors_create()
    trace_create(actors.acme, "run-42")
    _, key = api_key_create(project=actors.acme, name="widget", scopes=["feedback"])
    (folder / "index.html").write_text(_widget_html(live_server.url, key), encoding="utf-8")
    return actors, origin


def test_the_docs_widget_sends_a_thumbs_down_from_a_listed_origin(page, widget_page):
    actors, origin = widget_page
    Project.objects.filter(pk=actors.acme.pk).update(feedback_origins=[origin])
    page.goto(f"{origin}/index.html")
    page.click("button[aria-label='Not helpful']")
    page.wait_for_function("document.querySelector('[role=status]').textContent !== ''")
    assert page.inner_text("[role=status]") == "Thanks!"
    score = Score.objects.get(source="feedback")
    assert (score.trace.trace_id, score.scorer, score.passed, score.detail["user_id"]) == (
        "run-42",
        "feedback:thumbs",
        False,
        "u-1842",
    )


def test_the_browser_stops_the_widget_on_an_origin_the_project_does_not_list(page, widget_page):
    _, origin = widget_page
    page.goto(f"{origin}/index.html")
    page.click("button[aria-label='Helpful']")
    page.wait_for_function("document.querySelector('[role=status]').textContent !== ''")
    assert page.inner_text("[role=status]") == "Not sent"
    assert not Score.objects.filter(source="feedback").exists()


def test_the_run_page_shows_the_feedback_and_passes_axe(page, widget_page):
    actors, origin = widget_page
    Project.objects.filter(pk=actors.acme.pk).update(feedback_origins=[origin])
    page.goto(f"{origin}/index.html")
    page.click("button[aria-label='Not helpful']")
    page.wait_for_function("document.querySelector('[role=status]').textContent === 'Thanks!'")
    log_in(page, "victor", "/p/acme/runs/run-42/")
    assert "u-1842" in page.inner_text("#run-feedback")
    assert axe_violations(page) == []
