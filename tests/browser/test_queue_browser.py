"""The annotation queue in a real browser: labelling by keys, the lease between two reviewers, narrow screens.

Chromium drives the queue as a reviewer does, with the keyboard only: y/n and digits
label, the form goes by itself once every label has a value, s skips, k goes back, ?
shows the keys, e writes a case's expected answer. Two browser sessions (alice and bob)
are given different runs and bob cannot label the run alice holds. Every page is checked
at 390 px and 1440 px wide for sideways scrolling; screenshots go to ``var/artifacts``.
"""

import re

import pytest
from django.contrib.auth import get_user_model

from datasets.models import Dataset, GoldenCase
from scoring.labels import label_config_create, label_configs_for_criteria, label_write
from scoring.models import QueueItem, Score, ScoreSource
from scoring.review.queue import queue_filter_create
from tests.base import actors_create
from tests.browser.conftest import log_in
from tests.factories import trace_create

pytestmark = pytest.mark.browser

RUNS = 6
WIDER_THAN_SCREEN = """Array.from(document.querySelectorAll('body *'))
  .filter(e => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
  .slice(0, 5).map(e => e.tagName + '.' + e.className + '#' + e.id)"""


@pytest.fixture
def acme(transactional_db):
    actors = actors_create()
    label_config_create(project=actors.acme, data={"name": "helpful", "description": "Did it help the member?"})
    label_config_create(
        project=actors.acme,
        data={"name": "tone", "kind": "categorical", "options": ["rude", "neutral", "warm"], "passing": ["warm"]},
    )
    dataset = Dataset.objects.create(project=actors.acme, name="reservo")
    case = GoldenCase.objects.create(
        dataset=dataset, name="quote_focus", input="Focus pro 3h?", expected_output="Focus pro 3h cuesta 75,00 €."
    )
    for i in range(1, RUNS + 1):
        trace_create(actors.acme, f"run-{i}", output=f"Focus pro 3h cuesta {70 + i},00 €.", case=case.pk)
    GoldenCase.objects.create(dataset=dataset, name="needs_answer", input="¿Y la Boardroom?")
    actors.queue = queue_filter_create(project=actors.acme, data={"name": "reservo runs", "dataset": "reservo"})
    return actors


def _session(browser, live_server, username, path, width=1280):
    context = browser.new_context(base_url=live_server.url, viewport={"width": width, "height": 900})
    context.set_default_timeout(15_000)
    page = context.new_page()
    log_in(page, username, "/p/acme/runs/")
    page.goto(path)
    return page


def _labels(author):
    return {
        (s.trace.trace_id, s.scorer): s.detail["label"]
        for s in Score.objects.filter(source=ScoreSource.HUMAN, detail__author=author).select_related("trace")
    }


def test_a_reviewer_labels_five_runs_skips_one_and_goes_back_by_keys_only(browser, live_server, acme, artifacts_dir):
    page = _session(browser, live_server, "bob", "/p/acme/queue/")
    page.click(f"text={acme.queue.name}")
    page.wait_for_url("**/items/*/")
    assert "1 of 6" in page.inner_text("#queue-progress")
    assert "<del>" in page.inner_html("#item-diff") and "quote_room" in page.inner_text("main")
    page.screenshot(path=str(artifacts_dir / "queue-item.png"), full_page=True)
    page.keyboard.press("?")
    assert page.locator("#keys-help").evaluate("d => d.open")
    page.keyboard.press("?")
    for n in range(1, 6):
        assert f"{n} of 6" in page.inner_text("#queue-progress")
        with page.expect_navigation():
            page.keyboard.press("y" if n % 2 else "n")
            page.keyboard.press("3" if n != 4 else "1")
        page.wait_for_url("**/items/*/")
    assert "run-6" in page.inner_text("h1")
    with page.expect_navigation():
        page.keyboard.press("s")
    assert "Nothing left" in page.inner_text("#queue-empty")
    assert "6 of 6" in page.inner_text("#queue-progress")

    labels = _labels("bob")
    assert len(labels) == 10
    assert labels[("run-1", "label:helpful")] is True and labels[("run-2", "label:helpful")] is False
    assert labels[("run-4", "label:tone")] == "rude" and labels[("run-5", "label:tone")] == "warm"
    assert QueueItem.objects.get(item=acme.acme.traces.get(trace_id="run-6").pk).outcome == "skipped"

    page.goto(f"/p/acme/queue/{acme.queue.pk}/items/{acme.acme.traces.get(trace_id='run-5').pk}/")
    assert page.locator("#label-form input[value=warm]").is_checked(), "a done run shows the reviewer's own labels"
    with page.expect_navigation():
        page.keyboard.press("k")
    assert "run-4" in page.inner_text("h1")


def test_a_reviewer_writes_an_expected_answer_and_captures_a_run_from_the_queue(browser, live_server, acme):
    page = _session(browser, live_server, "bob", "/p/acme/review/")
    page.click("#review-to-queue button")
    page.wait_for_url("**/items/*/")
    assert "needs_answer" in page.inner_text("h1")
    page.keyboard.press("e")
    page.keyboard.type("La Boardroom cuesta 120,00 €.")
    page.keyboard.press("Escape")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert "Nothing left" in page.inner_text("#queue-empty")
    assert GoldenCase.objects.get(name="needs_answer").expected_output == "La Boardroom cuesta 120,00 €."

    page.goto(f"/p/acme/queue/{acme.queue.pk}/")
    with page.expect_navigation():
        page.keyboard.press("c")
    page.wait_for_url(f"**/p/acme/runs/run-1/?queue={acme.queue.pk}#capture-form")
    form = page.locator("#capture-form")
    form.locator("#id_dataset").select_option("reservo")
    form.locator("#id_name").fill("from_the_queue")
    form.locator("#id_expected_output").fill("Focus pro 3h cuesta 75,00 €.")
    form.locator("button[type=submit]").click()
    page.wait_for_url(re.compile(r"/items/\d+/"))
    assert "Captured 1 run into reservo" in page.inner_text(".messages")
    assert "run-2" in page.inner_text("h1"), "the captured run is done in the queue"
    assert GoldenCase.objects.filter(name="from_the_queue", source_trace_id="run-1").exists()
    assert QueueItem.objects.get(item=acme.acme.traces.get(trace_id="run-1").pk).outcome == "captured"


def test_two_reviewers_in_two_browsers_are_never_given_the_same_run(browser, live_server, acme):
    alice = _session(browser, live_server, "alice", f"/p/acme/queue/{acme.queue.pk}/")
    bob = _session(browser, live_server, "bob", f"/p/acme/queue/{acme.queue.pk}/")
    alice.wait_for_url("**/items/*/")
    bob.wait_for_url("**/items/*/")
    alice_run, bob_run = alice.inner_text("h1"), bob.inner_text("h1")
    assert "run-1" in alice_run and "run-2" in bob_run
    held = alice.url
    bob.goto(held)
    assert "alice is working on this item" in bob.inner_text("#held-by")
    assert bob.locator("#label-form").count() == 0
    with alice.expect_navigation():
        alice.keyboard.press("y")
        alice.keyboard.press("3")
    assert "run-3" in alice.inner_text("h1"), "alice moves past the run bob holds"
    bob.goto(f"/p/acme/queue/{acme.queue.pk}/")
    assert "run-2" in bob.inner_text("h1"), "bob keeps his run"
    assert set(_labels("alice")) == {("run-1", "label:helpful"), ("run-1", "label:tone")}


def test_a_viewer_sees_the_queue_without_label_controls(browser, live_server, acme):
    page = _session(browser, live_server, "victor", f"/p/acme/queue/{acme.queue.pk}/")
    page.wait_for_url("**/items/*/")
    assert "can read the queue but not label" in page.inner_text("aside")
    assert page.locator("#label-form").count() == 0 and page.locator("#skip-form").count() == 0
    response = page.request.post(page.url, form={"action": "skip"})
    assert response.status == 403
    assert not QueueItem.objects.exists()


@pytest.mark.parametrize("width", [390, 1440])
def test_the_pages_fit_the_screen(browser, live_server, acme, artifacts_dir, width):
    label_configs_for_criteria(project=acme.acme, criteria={"relevant": "Is the answer relevant?"})
    relevant = acme.acme.label_configs.get(name="relevant")
    for trace in acme.acme.traces.all():
        Score.objects.create(project=acme.acme, trace=trace, scorer="relevant", scorer_version="m", value=1.0,
                             passed=True, reason="on topic", source=ScoreSource.JUDGE, run_revision=trace.revision)  # fmt: skip
        label_write(project=acme.acme, trace=trace, config=relevant, value=trace.trace_id != "run-2",
                    author={"name": "bob", "by": "user"})  # fmt: skip
    page = _session(browser, live_server, "bob", "/p/acme/queue/", width=width)
    item = f"/p/acme/queue/{acme.queue.pk}/items/{acme.acme.traces.get(trace_id='run-1').pk}/"
    for name, path in (("queue-list", "/p/acme/queue/"), ("queue-item", item), ("labels", "/p/acme/labels/"),
                       ("agreement", "/p/acme/agreement/"), ("run", "/p/acme/runs/run-2/"),
                       ("review", "/p/acme/review/")):  # fmt: skip
        page.goto(path)
        overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
        page.screenshot(path=str(artifacts_dir / f"{name}-{width}.png"), full_page=True)
        wide = page.evaluate(WIDER_THAN_SCREEN)
        assert overflow <= 0, f"{name} scrolls sideways by {overflow}px at {width}px: {wide}"
    assert get_user_model().objects.filter(username="bob").exists()
    page.goto("/p/acme/agreement/")
    assert "run-2" in page.inner_text("table.disagreements")
