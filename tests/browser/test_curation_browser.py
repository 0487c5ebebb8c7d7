"""A reviewer curates in a real browser; a viewer cannot.

Chromium drives the pages as a reviewer does: log in, open a failed run, capture it
with the expected answer written by hand, find the case in its dataset, edit it and
read the revision. Screenshots of the run page and the dataset page are kept under
``var/artifacts`` for a human to look at.
"""

import pytest

from datasets.models import CaseRevision, Dataset, GoldenCase
from tests.base import actors_create
from tests.browser.conftest import log_in
from tests.factories import trace_create

pytestmark = pytest.mark.browser

SPANS = [
    {"span_id": "turn-1", "kind": "llm", "name": "model", "latency_ms": 400, "model": "scripted"},
    {
        "span_id": "tool-1",
        "parent_id": "turn-1",
        "kind": "tool",
        "name": "book_room",
        "input": {"room": "Focus", "tier": "pro", "hours": 3, "member": "Ana"},
        "output": {"booking_id": "BK-0001", "status": "confirmed"},
        "latency_ms": 50,
    },
]
EXPECTED = "La sala Focus en tier pro por 3 horas cuesta 75,00 EUR."


@pytest.fixture
def acme(transactional_db):
    actors = actors_create()
    Dataset.objects.create(project=actors.acme, name="reservo", description="Booking agent golden set")
    trace_create(
        actors.acme,
        "run-quote-42",
        input="¿Cuánto cuesta la sala Focus en tier pro por 3 horas?",
        output="Reservé la sala Focus para Ana (BK-0001).",
        spans=SPANS,
    )
    trace_create(actors.acme, "run-quote-43", input="¿Y la Boardroom?", output="No lo sé.")
    return actors


def test_a_reviewer_captures_a_run_edits_the_case_and_sees_the_revision(page, acme, artifacts_dir):
    log_in(page, "bob", "/p/acme/runs/")
    page.click("text=run-quote-42")
    page.wait_for_url("**/p/acme/runs/run-quote-42/")
    assert "book_room" in page.inner_text("table.spans")
    assert "BK-0001" in page.inner_text("table.spans")
    page.screenshot(path=str(artifacts_dir / "run-page.png"), full_page=True)

    form = page.locator("#capture-form")
    assert not form.locator("#id_use_output_as_expected").is_checked()
    form.locator("#id_dataset").select_option("reservo")
    form.locator("#id_name").fill("quote_focus_pro_3h")
    form.locator("#id_expected_output").fill(EXPECTED)
    form.locator("button[type=submit]").click()
    page.wait_for_url("**/p/acme/runs/run-quote-42/")
    assert "Captured 1 run into reservo" in page.inner_text(".messages")
    page.click("ul.cases-from-run >> text=quote_focus_pro_3h")

    page.click("nav >> text=Datasets")
    page.click("table.datasets >> text=reservo")
    page.wait_for_url("**/p/acme/datasets/reservo/")
    row = page.locator("table.cases tr", has_text="quote_focus_pro_3h")
    assert "run-quote-42" in row.inner_text()
    assert "needs expected answer" not in row.inner_text()
    page.screenshot(path=str(artifacts_dir / "dataset-page.png"), full_page=True)

    row.locator("a", has_text="quote_focus_pro_3h").click()
    page.fill("#id_expected_output", "75,00 EUR")
    page.fill("#id_notes", "Quoting must quote, not book.")
    page.click("#case-form button[type=submit]")
    assert "saved as version 2" in page.inner_text(".messages")
    assert page.inner_text("#case-version") == "2"
    latest = page.locator("#revisions tbody tr").first
    text = latest.inner_text()
    assert "v2" in text and "updated" in text and "bob" in text
    assert EXPECTED in text and "75,00 EUR" in text and "Quoting must quote" in text
    page.screenshot(path=str(artifacts_dir / "case-page.png"), full_page=True)

    case = GoldenCase.objects.get()
    assert (case.version, case.expected_output, case.source_trace_id) == (2, "75,00 EUR", "run-quote-42")
    assert CaseRevision.objects.get(case=case, version=2).changed_by.username == "bob"


def test_a_bad_expectation_is_named_next_to_the_field_and_the_input_is_kept(page, acme):
    log_in(page, "bob", "/p/acme/runs/run-quote-42/")
    form = page.locator("#capture-form")
    form.locator("#id_dataset").select_option("reservo")
    form.locator("#id_expected_output").fill(EXPECTED)
    form.locator("#id_expectations").fill('{"expected_tool": ["quote_room"]}')
    form.locator("button[type=submit]").click()
    error = page.locator("#id_expectations-error")
    assert "did you mean 'expected_tools'" in error.inner_text()
    assert page.locator("#id_expected_output").input_value() == EXPECTED
    assert page.locator("#id_expectations").input_value() == '{"expected_tool": ["quote_room"]}'
    assert page.locator("#id_dataset").input_value() == "reservo"
    assert not GoldenCase.objects.exists()


def test_a_reviewer_captures_several_runs_from_the_list_in_one_step(page, acme, artifacts_dir):
    log_in(page, "bob", "/p/acme/runs/")
    page.check("input[name=trace_ids][value=run-quote-42]")
    page.check("input[name=trace_ids][value=run-quote-43]")
    page.fill("#id_new_dataset", "regressions")
    page.screenshot(path=str(artifacts_dir / "runs-page.png"), full_page=True)
    page.click("text=Capture selected runs")
    page.wait_for_url("**/p/acme/datasets/regressions/")
    assert page.locator("table.cases tbody tr").count() == 2
    assert page.locator("table.cases >> text=needs expected answer").count() == 2
    page.click("nav >> text=Review queue")
    assert page.locator("table.cases tbody tr").count() == 2
    page.screenshot(path=str(artifacts_dir / "review-queue.png"), full_page=True)


def test_a_viewer_sees_no_capture_form_and_gets_403_when_posting_anyway(page, acme):
    log_in(page, "victor", "/p/acme/runs/run-quote-42/")
    assert "book_room" in page.inner_text("table.spans")
    assert page.locator("#capture-form").count() == 0
    assert page.locator("input[name=trace_ids]").count() == 0

    csrf = next(c["value"] for c in page.context.cookies() if c["name"] == "csrftoken")
    url = page.url
    response = page.request.post(
        url,
        form={"dataset": "reservo", "expected_output": EXPECTED, "expected_output_format": "text"},
        headers={"X-CSRFToken": csrf, "Referer": url},
    )
    assert response.status == 403
    assert "Not allowed" in response.text()
    assert not GoldenCase.objects.exists()
