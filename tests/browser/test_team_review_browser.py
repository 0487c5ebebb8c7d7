"""Team review in a real browser: two reviewers label one queue blind, their agreement, an adjudication.

Bob and Dana work the same queue (two reviewers per item, blind) in two browser contexts
at once: each is handed every run, neither sees the other's label, and the page of the
queue's agreement shows Cohen's kappa of their labels. Alice, an admin, then decides the
run they disagree on. Each page is checked at 390 px and 1440 px for sideways scrolling
and with axe-core (no serious or critical violation).
"""

import pytest

from evalsite.models import Role
from evalsite.projects import membership_set
from scoring.labels import label_config_create
from scoring.review.adjudication import reference_label
from scoring.review.assignment import queue_team_create
from tests.base import actors_create, user_create
from tests.browser.conftest import axe_violations, log_in, overflow_px
from tests.factories import trace_create

pytestmark = pytest.mark.browser

# run -> (bob's label, dana's label): they disagree on the first only.
LABELS = {"team-1": (True, False), "team-2": (True, True), "team-3": (False, False)}
# By hand: p_o = 2/3; bob says yes 2 of 3, dana 1 of 3: p_e = 2/3*1/3 + 1/3*2/3 = 4/9; kappa = (2/9) / (5/9).
KAPPA = 0.4


@pytest.fixture
def team(transactional_db):
    actors = actors_create()
    actors.dana = user_create("dana")
    membership_set(user=actors.dana, project=actors.acme, role=Role.REVIEWER)
    actors.config = label_config_create(project=actors.acme, data={"name": "helpful", "description": "Did it help?"})
    for trace_id in LABELS:
        trace_create(actors.acme, trace_id, output=f"the answer of {trace_id}")
    actors.queue = queue_team_create(
        project=actors.acme,
        data={"name": "pair review", "reviewers_per_item": 2, "blind": True, "assignees": ["bob", "dana"]},
    )
    return actors


def _session(browser, live_server, username, width):
    context = browser.new_context(base_url=live_server.url, viewport={"width": width, "height": 900})
    context.set_default_timeout(15_000)
    page = context.new_page()
    log_in(page, username, "/p/acme/queue/")
    return page


def _fits_and_passes_axe(page, name, width):
    assert overflow_px(page) <= 0, f"{name} scrolls sideways at {width}px"
    assert axe_violations(page) == [], f"{name} at {width}px"


def _take_and_label(page, team, who, width):
    """Open the queue, take the next run, check it is blind, label it by key; the run's trace id."""
    page.goto(f"/p/acme/queue/{team.queue.pk}/")
    page.wait_for_url("**/items/*/")
    trace_id = page.inner_text("h1 code")
    assert page.locator("#blind-note").is_visible()
    other = "dana" if who == 0 else "bob"
    assert other not in page.inner_text("#label-tags"), f"blind: {other}'s label is hidden"
    if trace_id == "team-1":
        _fits_and_passes_axe(page, "queue item", width)
    with page.expect_navigation():
        page.keyboard.press("y" if LABELS[trace_id][who] else "n")
    return trace_id


@pytest.mark.parametrize("width", [390, 1440])
def test_two_reviewers_label_blind_their_agreement_shows_and_an_admin_decides(browser, live_server, team, width):
    bob = _session(browser, live_server, "bob", width)
    dana = _session(browser, live_server, "dana", width)
    _fits_and_passes_axe(bob, "queue list", width)
    # Turn by turn, in the two browsers at once: both are handed every run.
    for expected in LABELS:
        assert _take_and_label(bob, team, 0, width) == expected
        assert _take_and_label(dana, team, 1, width) == expected
    dana.goto(f"/p/acme/queue/{team.queue.pk}/")
    assert "Nothing left for you" in dana.inner_text("#queue-empty")
    assert "3 of 3 done" in dana.inner_text("#queue-progress")

    alice = _session(browser, live_server, "alice", width)
    alice.goto(f"/p/acme/queue/{team.queue.pk}/adjudication/")
    row = alice.locator("#reviewer-agreement tr[data-config=helpful]")
    assert row.locator("td").nth(1).inner_text() == "kappa"
    assert row.locator(".agreement-value").inner_text() == f"{KAPPA:.3f}"
    assert row.locator(".agreement-items").inner_text() == "3"
    assert alice.inner_text("#disagreement-count") == "1"
    section = alice.locator("section.adjudication[data-trace=team-1]")
    assert "bob: yes" in section.inner_text() and "dana: no" in section.inner_text()
    _fits_and_passes_axe(alice, "adjudication", width)
    section.locator("input[name=comment]").fill("the answer cites no source")
    with alice.expect_navigation():
        section.locator("button", has_text="Decide: no").click()
    assert alice.locator("#no-disagreements").is_visible()
    reference = reference_label(team.acme.traces.get(trace_id="team-1"), team.config)
    assert (reference.passed, reference.detail["decided_by"], reference.reason) == (
        False, "alice", "the answer cites no source",
    )  # fmt: skip
    alice.goto("/p/acme/agreement/")
    assert alice.locator("#reviewer-agreement tr[data-config=helpful] .agreement-value").inner_text() == "0.400"
    _fits_and_passes_axe(alice, "agreement", width)
