"""Harvest's pages in a real browser at 390 px and 1440 px: nothing wider than the screen, an
axe-core check with no serious or critical violation, and a reviewer capturing a case from a group."""

import pytest

from datasets.models import Dataset, GoldenCase
from harvest.models import FailureGroup
from harvest.services import groups_build
from tests.base import actors_create
from tests.browser.conftest import axe_violations, log_in
from tests.harvest.traffic import traffic_create

pytestmark = pytest.mark.browser
WIDTHS = (390, 1440)


def test_the_harvest_pages_fit_390_and_1440_pixels_and_pass_axe(page, transactional_db, artifacts_dir):
    actors = actors_create()
    planted = traffic_create(actors.acme)
    groups_build(project_id=actors.acme.pk)
    Dataset.objects.create(project=actors.acme, name="golden")
    group = FailureGroup.objects.get(members__trace__trace_id=planted["wrong_tool"][0])
    pages = {
        "harvest": "/p/acme/harvest/",
        "group": f"/p/acme/harvest/{group.pk}/",
        "dataset": "/p/acme/datasets/golden/",
    }
    log_in(page, "bob")
    problems = []
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        for name, path in pages.items():
            assert page.goto(path).status == 200, path
            overflow = page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
            if overflow > 0:
                problems.append(f"{name} at {width}px is {overflow}px wider than the screen")
            page.screenshot(path=str(artifacts_dir / f"page-harvest-{name}-{width}.png"), full_page=True)
            if width == WIDTHS[0]:
                problems += [f"{name}: {violation}" for violation in axe_violations(page)]
    assert not problems, "\n".join(problems)


def test_a_reviewer_goes_from_the_biggest_uncovered_group_to_a_case(page, transactional_db):
    actors = actors_create()
    traffic_create(actors.acme)
    groups_build(project_id=actors.acme.pk)
    Dataset.objects.create(project=actors.acme, name="golden")
    log_in(page, "bob", "/p/acme/harvest/")
    page.set_viewport_size({"width": 390, "height": 900})
    page.click("table.harvest-groups tbody tr:first-child a")
    page.select_option("#id_dataset", "golden")
    page.fill("#id_expected_output", "Booked.")
    page.click("#capture-form button[type=submit]")
    page.wait_for_selector("text=Captured 1 run into golden")
    case = GoldenCase.objects.get()
    assert case.expected_output == "Booked." and case.source_trace_id.startswith("wrong_tool-")
    page.goto("/p/acme/harvest/")
    first_row = page.locator("table.harvest-groups tbody tr").first
    assert "covered" in first_row.inner_text() and "uncovered" not in first_row.inner_text()
