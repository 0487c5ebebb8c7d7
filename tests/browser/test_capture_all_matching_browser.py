"""A reviewer captures every run a filter matches, in a real browser, with and without JavaScript.

With JavaScript the offer "Select all N runs matching this filter" appears once every run
on the page is ticked and goes away when one is unticked; the capture then takes the
filter's runs (more than the page shows), skipping the runs already in the dataset and
saying how many. Without JavaScript the offer is always there and works the same. A
filter matching more than the limit gets a message and nothing is written. Screenshots at
390 and 1440 px go to ``var/artifacts``, with an axe-core check of the page.
"""

from datetime import UTC, datetime, timedelta

import pytest

from datasets.models import Dataset, GoldenCase, Trace
from gating.models import Experiment
from tests.base import actors_create
from tests.browser.conftest import axe_violations, log_in, no_js_page, overflow_px
from web.pages import runs as runs_page

pytestmark = pytest.mark.browser

START = datetime(2026, 11, 30, 10, 0, tzinfo=UTC)
LIST = "/p/acme/runs/?experiment=v1"
MATCHING = 62  # more than the 50 runs of a page


@pytest.fixture
def acme(transactional_db):
    actors = actors_create()
    dataset = Dataset.objects.create(project=actors.acme, name="reservo")
    v1 = Experiment.objects.create(project=actors.acme, name="v1")
    v2 = Experiment.objects.create(project=actors.acme, name="v2")
    Trace.objects.bulk_create(
        Trace(
            project=actors.acme, trace_id=f"{e.name}-{i:03d}", input=f"¿Sala {i}?", output=f"Sala {i}: 75,00 €.",
            started_at=START + timedelta(seconds=i), experiment=e,
        )
        for e, n in ((v1, MATCHING), (v2, 4))
        for i in range(n)
    )  # fmt: skip
    for trace_id in ("v1-000", "v1-001"):
        GoldenCase.objects.create(dataset=dataset, name=trace_id, input="?", source_trace_id=trace_id)
    return actors


def _sources():
    return set(GoldenCase.objects.filter(dataset__name="reservo").values_list("source_trace_id", flat=True))


def test_select_all_on_the_page_offers_every_matching_run_and_captures_them(page, acme, artifacts_dir):
    log_in(page, "bob", LIST)
    offer = page.locator("#select-matching")
    assert not offer.is_visible()
    page.check("#select-all")
    assert offer.is_visible()
    assert f"Select all {MATCHING} runs matching this filter" in offer.inner_text()
    assert "All 50 runs on this page are selected." in offer.inner_text()

    page.locator("input[name=trace_ids]").first.uncheck()  # one run unticked: the offer goes
    assert not offer.is_visible() and not page.is_checked("#select-all")
    page.check("#select-all")
    page.check("#id_all_matching")
    submit = page.locator("#capture-submit")
    assert submit.inner_text() == f"Capture all {MATCHING} matching runs"
    page.select_option("#id_dataset", "reservo")
    problems = []
    for width in (390, 1440):
        page.set_viewport_size({"width": width, "height": 900})
        if overflow_px(page) > 0:
            problems.append(f"runs list with the offer at {width}px is {overflow_px(page)}px too wide")
        page.screenshot(path=str(artifacts_dir / f"runs-all-matching-{width}.png"), full_page=True)
    problems += axe_violations(page)
    assert not problems, "\n".join(problems)

    submit.click()
    page.wait_for_url("**/p/acme/datasets/reservo/")
    message = page.inner_text(".messages")
    assert f"All {MATCHING} runs matching the filter: captured {MATCHING - 2} runs into reservo: v1-002, " in message
    assert "Already a case in reservo, no twin created: v1-000 (case v1-000), v1-001 (case v1-001)." in message
    assert _sources() == {f"v1-{i:03d}" for i in range(MATCHING)}  # none of v2's


def test_without_javascript_the_offer_is_there_and_captures_the_filters_runs(page, acme, live_server):
    plain = no_js_page(page, live_server)
    log_in(plain, "bob", LIST)
    assert plain.locator("#select-all").is_hidden()  # the page's tick-all needs JavaScript
    assert plain.locator("#select-matching").is_visible()
    plain.check("#id_all_matching")
    plain.click("details.bulk summary")
    plain.fill("#id_new_dataset", "triage")
    plain.click("#capture-submit")
    plain.wait_for_url("**/p/acme/datasets/triage/")
    assert f"captured {MATCHING} runs into triage" in plain.inner_text(".messages")
    assert GoldenCase.objects.filter(dataset__name="triage").count() == MATCHING


def test_a_filter_matching_more_than_the_limit_gets_a_message_and_nothing_is_written(
    page, acme, artifacts_dir, monkeypatch
):
    monkeypatch.setattr(runs_page, "ALL_MATCHING_MAX", 60)  # the live server runs in this process
    log_in(page, "bob", LIST)
    assert "At most 60 can be captured at once" in page.inner_text("#select-matching")
    page.check("#select-all")
    page.check("#id_all_matching")
    page.fill("#id_new_dataset", "too-many")
    page.click("#capture-submit")
    error = page.locator(".form-errors")
    assert f"{MATCHING} runs match this filter, and at most 60 can be captured at once" in error.inner_text()
    assert page.is_checked("#id_all_matching")  # the choice is kept for another try
    page.screenshot(path=str(artifacts_dir / "runs-all-matching-over-limit.png"), full_page=True)
    assert not Dataset.objects.filter(name="too-many").exists()
    assert _sources() == {"v1-000", "v1-001"}
