"""A stranger's agent, from the Harvest page alone: four hidden failure modes are found and a case captured for each.

The agent is a plant-care assistant of a kind the product has never seen (its tools,
checks and inputs are its own). The test knows the modes only to check the outcome:
the browser goes down the Harvest page, opens each uncovered group and captures its
first representative run with a corrected answer, until no group is uncovered.
"""

import pytest

from datasets.models import Dataset, GoldenCase, Trace
from harvest.services import groups_build
from tests.base import actors_create
from tests.browser.conftest import log_in
from tests.harvest.traffic import Mode, traffic_create

pytestmark = pytest.mark.browser

HIDDEN = (
    Mode("watering", 40, "How often should I water my {kind} {room} plant in {month}", ("lookup_species",),
         failed="tool_choice", reason="expected ['watering_schedule'], got ['lookup_species']"),
    Mode("pests", 25, "There are tiny white bugs on the leaves of my {topic} fern since {day}", ("diagnose",),
         feedback=True, reason="the treatment burnt the leaves"),
    Mode("soil_orders", 15, "Order {hours} bags of peat free compost for delivery to {city}", ("place_order",),
         error="ValueError: no stock for sku"),
    Mode("care_sheets", 8, "Translate the care sheet of the {room} orchid into {city} dialect", ("fetch_sheet",),
         abstained="faithful", reason="prose_reply"),
)  # fmt: skip
PASSING = Mode("fine", 30, "Which of my plants need light this {day}", ("list_plants",))


def test_all_four_hidden_modes_are_found_and_captured_from_the_harvest_page(page, transactional_db):
    actors = actors_create()
    traffic_create(actors.acme, modes=HIDDEN, passing=PASSING, prefix="gh-", seed=23)
    groups_build(project_id=actors.acme.pk)
    Dataset.objects.create(project=actors.acme, name="greenhouse")
    log_in(page, "bob", "/p/acme/harvest/")
    for _ in range(10):  # never more groups than that, or the grouping split a mode
        page.goto("/p/acme/harvest/?window=7d")
        uncovered = page.locator("table.harvest-groups tbody tr", has_text="uncovered")
        if uncovered.count() == 0:
            break
        uncovered.first.locator("a").first.click()
        page.select_option("#id_dataset", "greenhouse")
        page.fill("#id_expected_output", "The corrected answer, written by the reviewer.")
        page.click("#capture-form button[type=submit]")
        page.wait_for_selector("text=Captured 1 run into greenhouse")
    sources = GoldenCase.objects.filter(dataset__name="greenhouse").values_list("source_trace_id", flat=True)
    modes = [t.metadata["mode"] for t in Trace.objects.filter(project=actors.acme, trace_id__in=list(sources))]
    assert sorted(modes) == sorted(m.name for m in HIDDEN)
    page.goto("/p/acme/datasets/greenhouse/")
    assert "100% of the 88 failing production runs fall in groups this dataset covers" in page.inner_text("main")
