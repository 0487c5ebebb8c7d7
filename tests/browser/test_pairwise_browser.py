"""Pairwise review in a real browser: a reviewer judges Larder's two versions case by case with
the keys, the compare page shows the figures, the field diffs of a changed case and the sort by
drop; every page fits 390 px and 1440 px and passes axe-core (no serious or critical violation).
"""

import pytest

from datasets.models import GoldenCase
from scoring.models import PairwiseJudgement
from tests.base import actors_create
from tests.browser.conftest import axe_violations, log_in, overflow_px
from tests.scoring.pairwise_data import larder_create

pytestmark = pytest.mark.browser

COMPARE = "/p/acme/experiments/compare/?base=v1&candidate=v2"
PAIRWISE = "/p/acme/experiments/pairwise/?base=v1&candidate=v2"
LONG_NAME = "bread_sourdough_wholegrain_seeded_rye_loaf_800g_sliced"


@pytest.fixture
def larder(transactional_db):
    actors = actors_create()
    larder_create(actors, tools={("v2", "milk"): "order_all"})
    # One case named as one long word, as generated names are: it must not widen a phone's page.
    GoldenCase.objects.filter(name="bread").update(name=LONG_NAME)
    for experiment in ("v1", "v2"):
        response = actors.api().post("/v1/api/gate", {"dataset": "larder", "experiment": experiment}, format="json")
        assert response.status_code == 200, response.content
    return actors


def _checked(page, artifacts_dir, name):
    """The page fits its width and has no serious or critical axe-core violation; a screenshot is kept."""
    width = page.viewport_size["width"]
    page.screenshot(path=str(artifacts_dir / f"pairwise-{name}-{width}.png"), full_page=True)
    assert overflow_px(page) <= 0, f"{name} is wider than {width} px"
    assert axe_violations(page) == [], name


def _judge_by_key(page, key):
    with page.expect_navigation():
        page.keyboard.press(key)


def test_a_reviewer_judges_three_cases_by_key_and_the_compare_page_shows_the_figures(page, larder, artifacts_dir):
    page.set_viewport_size({"width": 1440, "height": 900})
    log_in(page, "bob", "/p/acme/runs/")
    page.goto(COMPARE)
    assert page.locator(".field-diff").first.is_visible()
    assert "$.items[0].qty: 3 → 4" in page.locator(".field-diff").first.inner_text()
    assert "order → order_all" in page.locator(".field-diff").first.inner_text()
    _checked(page, artifacts_dir, "compare")
    page.get_by_role("link", name="Review answers pairwise").click()
    page.wait_for_url("**/experiments/pairwise/**")
    assert "bread" in page.locator("h2").first.inner_text()
    _checked(page, artifacts_dir, "review")
    for key, case in (("3", "eggs"), ("2", "milk")):
        _judge_by_key(page, key)
        assert case in page.locator("h2").first.inner_text()
    _judge_by_key(page, "1")
    assert page.locator("#pairwise-done").is_visible()
    verdicts = {(j.case.name, j.verdict) for j in PairwiseJudgement.objects.select_related("case")}
    # Stored in the pair's one order (v1 first): "candidate better" on bread is v1 worse.
    assert verdicts == {(LONG_NAME, "worse"), ("eggs", "tie"), ("milk", "better")}
    page.get_by_role("link", name="Back to the comparison").click()
    summary = page.locator(".pairwise-summary")
    assert "Judgements\n3" in summary.inner_text() or "Judgements 3" in summary.inner_text().replace("\n", " ")
    assert "0.500" in summary.inner_text()  # one win, one loss, the tie left out


def test_the_compare_page_sorts_by_drop_and_the_review_page_fits_a_phone(page, larder, artifacts_dir):
    log_in(page, "bob", "/p/acme/runs/")
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(COMPARE + "&show=all")
    assert (
        page.locator("tr.case-row").first.get_attribute("data-case") == "eggs"
    )  # report order (the dataset's id order)
    page.get_by_role("link", name="Largest drop first").first.click()
    page.wait_for_url("**sort=drop**")
    assert "show=all" in page.url
    assert page.locator("tr.case-row").first.get_attribute("data-case") == "milk"  # pass → fail first
    for width in (390, 1440):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(COMPARE + "&show=all&sort=drop")
        _checked(page, artifacts_dir, "compare-sorted")
        page.goto(PAIRWISE)
        _checked(page, artifacts_dir, "review")
        if width == 390:
            boxes = [page.locator(".pairwise-answers > div").nth(i).bounding_box() for i in (0, 1)]
            assert boxes[1]["y"] >= boxes[0]["y"] + boxes[0]["height"] - 1  # stacked, not side by side
    page.keyboard.press("?")
    assert page.locator("#keys-help").get_attribute("open") is not None
