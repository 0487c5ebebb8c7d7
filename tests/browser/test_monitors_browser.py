"""The monitors pages in a real browser at 390 px and 1440 px: nothing wider than the screen,
an axe-core check with no serious or critical violation, a screenshot of each under ``var/artifacts/``."""

import pytest

from monitors.evaluation import monitor_evaluate
from monitors.models import Monitor
from tests.base import actors_create
from tests.browser.conftest import axe_violations, log_in
from tests.monitors.conftest import runs_create

pytestmark = pytest.mark.browser
WIDTHS = (390, 1440)


def test_the_monitors_pages_fit_390_and_1440_pixels_and_pass_axe(page, transactional_db, artifacts_dir):
    actors = actors_create()
    runs_create(actors.acme, prefix="a-rather-long-production-run-identifier", count=60, failing=30)

    monitor = Monitor.objects.create(
        project=actors.acme, name="checkout answers stay good", metric="pass_rate", scorer="quality", target=0.9,
        direction="above", secret="s" * 64, webhook_urls=["https://hooks.example.com/services/T000/B000/XXXXXXXXXXXX"],
    )  # fmt: skip
    alert = monitor_evaluate(monitor_id=monitor.pk)
    pages = {
        "monitors": "/p/acme/monitors/",
        "monitor": f"/p/acme/monitors/{monitor.pk}/",
        "alert": f"/p/acme/alerts/{alert.pk}/",
    }
    log_in(page, "alice", "/p/acme/monitors/")
    problems = []
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        for name, path in pages.items():
            assert page.goto(path).status == 200, path
            overflow = page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
            if overflow > 0:
                problems.append(f"{name} at {width}px is {overflow}px wider than the screen")
            page.screenshot(path=str(artifacts_dir / f"page-{name}-{width}.png"), full_page=True)
            if width == WIDTHS[0]:
                problems += [f"{name}: {violation}" for violation in axe_violations(page)]
    assert not problems, "\n".join(problems)
