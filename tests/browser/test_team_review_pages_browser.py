"""In a real browser at 390 px and 1440 px: an admin edits the gate policy and a reviewer
quarantines a case from the dataset page; the run page of a run with long ids and long
JSON fits a 390 px screen. axe-core finds no serious or critical violation on any of them.
"""

import pytest

from datasets.ingestion import traces_ingest
from datasets.models import Dataset, GoldenCase
from gating.models import GatePolicy, PolicyRevision
from scoring.labels import label_config_create
from scoring.models import Abstention, Score
from tests.base import actors_create
from tests.browser.conftest import axe_violations, log_in, overflow_px
from tests.factories import run_payload

pytestmark = pytest.mark.browser

WIDTHS = (390, 1440)
LONG_ID = "ci/main/" + "x" * 120 + "/attempt-42"
LONG_WORD = "token_" + "y" * 200


def _long_run(project):
    spans = [
        {"span_id": "s1", "kind": "llm", "name": "model-" + "m" * 80, "latency_ms": 400, "model": "scripted-" + "z" * 60,
         "input": {"messages": [{"role": "user", "content": LONG_WORD}]}, "output": {"text": LONG_WORD}},
        {"span_id": "s2", "parent_id": "s1", "kind": "tool", "name": "quote_room_" + "q" * 60,
         "input": {"room": LONG_WORD, "nested": {"deep": {"deeper": ["a" * 150]}}}, "output": {"total_cents": 7500}},
    ]  # fmt: skip
    payload = run_payload(
        LONG_ID, spans=spans, input={"question": LONG_WORD, "context": "w " * 400}, output=LONG_WORD,
        session_id="session-" + "s" * 100, user_id="user-" + "u" * 100, experiment="exp-" + "e" * 90,
        error="Traceback: " + "E" * 300,
    )  # fmt: skip
    traces_ingest(project=project, payload={"traces": [payload]})
    from datasets.models import Trace

    trace = Trace.objects.get(project=project, trace_id=LONG_ID)
    Score.objects.create(
        project=project, trace=trace, scorer="regex", config_hash="h", value=0, passed=False,
        reason="did not match " + "p" * 200, detail={"pattern": "r" * 300},
    )  # fmt: skip
    Abstention.objects.create(
        project=project, trace=trace, scorer="tool_output_" + "o" * 40, reason="not_configured",
        detail={"message": "n" * 300},
    )  # fmt: skip
    label_config_create(project=project, data={"name": "helpful_" + "h" * 50, "description": "d" * 300})
    label_config_create(
        project=project,
        data={"name": "tone", "kind": "categorical", "options": ["o" * 80, "fine"], "passing": ["fine"]},
    )


@pytest.fixture
def site(transactional_db):
    actors = actors_create()
    dataset = Dataset.objects.create(project=actors.acme, name="refills")
    GatePolicy.objects.create(dataset=dataset, min_pass_rate=0.9, trials=3, max_flaky=0)
    for name in ("refill_rare_drug", "refill_common_drug"):
        GoldenCase.objects.create(dataset=dataset, name=name, input="¿Hay stock?", expected_output="Sí.")
    _long_run(actors.acme)
    return actors


def _check(page, problems, name, width):
    if overflow_px(page) > 0:
        problems.append(f"{name} at {width}px is {overflow_px(page)}px wider than the screen")
    problems.extend(f"{name} at {width}px: {v}" for v in axe_violations(page))


def test_an_admin_edits_the_policy_from_the_dataset_page(page, site, artifacts_dir):
    log_in(page, "alice", "/p/acme/datasets/refills/")
    problems = []
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.goto("/p/acme/datasets/refills/")
        page.click("text=Gate policy (revision")
        page.click("summary:has-text('Change the policy')")
        _check(page, problems, "dataset policy form", width)
    page.fill("#id_policy-max_flaky", "")
    page.click("button:has-text('Save the policy')")
    assert page.locator(".form-errors").inner_text().startswith("This change loosens the gate of refills")
    assert not PolicyRevision.objects.exists()
    _check(page, problems, "policy refused", WIDTHS[1])
    page.fill("#id_policy-reason", "a flaky pharmacy API this week")
    page.click("button:has-text('Save the policy')")
    page.wait_for_url("**/datasets/refills/#policy")
    assert "now at revision 1" in page.locator("main").inner_text()
    row = page.locator('table.policy-history tr[data-revision="1"]').inner_text()
    assert "max_flaky 0 → none" in row and "loosens" in row and "a flaky pharmacy API this week" in row
    page.screenshot(path=str(artifacts_dir / "team-review-policy-1440.png"), full_page=True)
    assert not problems, "\n".join(problems)


def test_a_reviewer_quarantines_a_case_from_the_case_list_and_releases_it(page, site, artifacts_dir):
    case = GoldenCase.objects.get(name="refill_rare_drug")
    log_in(page, "bob", "/p/acme/datasets/refills/")
    problems = []
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.goto("/p/acme/datasets/refills/")
        _check(page, problems, "dataset case list", width)
    page.fill(f"#quarantine-reason-{case.pk}", "supplier list changes this week")
    page.click(f"#quarantine-form-{case.pk} button")
    page.wait_for_url(f"**/datasets/refills/?status=active#case-{case.pk}")
    assert "Case refill_rare_drug is quarantined" in page.locator("main").inner_text()
    case.refresh_from_db()
    assert (case.quarantined, case.quarantine_reason) == (True, "supplier list changes this week")
    page.set_viewport_size({"width": 390, "height": 900})
    _check(page, problems, "dataset with a quarantined case", 390)
    page.screenshot(path=str(artifacts_dir / "team-review-quarantine-390.png"), full_page=True)
    page.fill(f"#release-reason-{case.pk}", "the supplier list is fixed")
    page.click(f"#quarantine-form-{case.pk} button:has-text('Release')")
    page.wait_for_url(f"**#case-{case.pk}")
    assert "released from quarantine" in page.locator("main").inner_text()
    assert not GoldenCase.objects.get(pk=case.pk).quarantined
    assert GoldenCase.objects.get(pk=case.pk).revisions.last().reason == "the supplier list is fixed"
    assert not problems, "\n".join(problems)


def test_the_run_page_fits_390_pixels_with_long_ids_and_json(page, site, artifacts_dir):
    log_in(page, "bob", "/p/acme/runs/")
    problems = []
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(f"/p/acme/runs/{LONG_ID}/")
        page.locator("details").evaluate_all("els => els.forEach(e => e.open = true)")
        scroll_width = page.evaluate("() => document.documentElement.scrollWidth")
        if scroll_width > width:
            problems.append(f"the run page at {width}px is {scroll_width}px wide")
        _check(page, problems, "run page", width)
        page.screenshot(path=str(artifacts_dir / f"team-review-run-{width}.png"), full_page=True)
    assert not problems, "\n".join(problems)
