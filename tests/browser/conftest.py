"""Browser tests: Playwright driving Debian's Chromium against a live server.

The live server is pytest-django's ``live_server`` (a threaded server in this process,
on the test database; it implies ``transactional_db``). Chromium is the system one at
``/usr/bin/chromium`` (``.ci/run`` installs it when missing): Playwright's own browser
download is not used. A missing Chromium fails the tests with a message saying how to
install it; they are never skipped silently. Screenshots go to ``VAR_DIR/artifacts``.
"""

import os
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connections

from tests.base import PASSWORD

CHROMIUM = Path(os.environ.get("EVALSITE_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture
def artifacts_dir():
    path = Path(settings.VAR_DIR) / "artifacts"
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture
def browser(live_server, monkeypatch):
    """Chromium itself, for a test that opens several contexts (two reviewers at once)."""
    if not CHROMIUM.exists():
        pytest.fail(f"Chromium is not installed at {CHROMIUM}: `apt-get install -y chromium`.")
    from playwright.sync_api import sync_playwright

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()
            _connections_closed()


@pytest.fixture
def page(live_server, monkeypatch):
    """A fresh Chromium page; ``page.base_url`` is the live server's URL."""
    if not CHROMIUM.exists():
        pytest.fail(
            f"Chromium is not installed at {CHROMIUM}: the browser tests need it. "
            "Install it with `apt-get install -y chromium chromium-driver` (.ci/run does this)."
        )
    from playwright.sync_api import sync_playwright

    # Playwright's sync API keeps an asyncio loop on this thread; Django's ORM refuses
    # to run beside a loop unless told it is safe, which it is here (the test itself
    # is synchronous and the live server answers on its own threads).
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        context = browser.new_context(base_url=live_server.url, viewport={"width": 1280, "height": 900})
        context.set_default_timeout(15_000)
        page = context.new_page()
        try:
            yield page
        finally:
            context.close()
            browser.close()
            _connections_closed()


def _connections_closed():
    # A connection the test opened while Playwright's loop ran on this thread is not the
    # one Django closes at the end of the session, which then cannot drop the test
    # database ("accessed by other users"): closed here, while it is still reachable.
    connections.close_all()


def log_in(page, username, next_path="/"):
    page.goto(f"/login/?next={next_path}")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"**{next_path}")


AXE = Path(__file__).resolve().parents[1] / "ci" / "node_modules" / "axe-core" / "axe.min.js"


def axe_violations(page):
    """The serious and critical axe-core violations (WCAG 2 A/AA and best practice) of the page as it is."""
    if not AXE.exists():
        pytest.fail(f"axe-core is not installed at {AXE}: run `npm install --prefix tests/ci` (.ci/run does this).")
    page.add_script_tag(path=str(AXE))
    result = page.evaluate(
        "async () => (await axe.run(document, {runOnly: ['wcag2a', 'wcag2aa', 'best-practice']})).violations"
        ".map(v => ({id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 3).map(n => n.target.join(' '))}))"
    )
    return [
        f"{v['id']} ({v['impact']}): {v['help']} at {v['nodes']}"
        for v in result
        if v["impact"] in ("serious", "critical")
    ]


def overflow_px(page):
    """How many pixels the page is wider than the screen (0 or less: it fits)."""
    return page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")


def no_js_page(page, live_server):
    """A second page, in its own context with JavaScript off, on the same live server."""
    context = page.context.browser.new_context(
        base_url=live_server.url, viewport={"width": 1280, "height": 900}, java_script_enabled=False
    )
    context.set_default_timeout(15_000)
    return context.new_page()
