"""Every reviewer page in a real browser at 390 px and 1440 px: nothing wider than the
screen, a screenshot of each kept under ``var/artifacts/``, and an axe-core check
(labels, contrast, names, landmarks) with no serious or critical violation.

The data: the demo (Reservo v1 baseline, v2 regressed, gate runs of both) plus a
dataset whose cases ran three trials each, one of them flaky and one quarantined.
"""

import pytest

from datasets.ingestion import traces_ingest
from datasets.models import Dataset, GoldenCase
from gating.evaluation import gate_request
from gating.models import GatePolicy
from lifecycle.demo import demo_data_load
from tests.base import actors_create
from tests.browser.conftest import axe_violations, log_in
from tests.factories import run_payload

pytestmark = pytest.mark.browser

WIDTHS = (390, 1440)
GOOD = [{"span_id": "t", "kind": "tool", "name": "quote_room", "input": {"room": "Focus"}, "output": {"total": 75}}]
BAD = [{"span_id": "t", "kind": "tool", "name": "book_room", "input": {"room": "Focus", "hours": 3}}]


def _trials(actors):
    dataset = Dataset.objects.create(project=actors.acme, name="desk")
    GatePolicy.objects.create(dataset=dataset, trials=3)
    outcomes = {"quote": ("ppp", "ppp"), "book": ("ppp", "pfp"), "cancel": ("fff", "ppp"), "move": ("ppp", "ppf")}
    for name in outcomes:
        GoldenCase.objects.create(
            dataset=dataset, name=name, expectations={"expected_tools": ["quote_room"]},
            quarantined=name == "move", quarantine_reason="the room API is flaky" if name == "move" else "",
        )  # fmt: skip
    gate_runs = []
    for side, experiment in enumerate(("t1", "t2")):
        runs = [
            run_payload(
                f"{experiment}-{case}-{i}", dataset="desk", case=case, experiment=experiment, trial=i,
                spans=GOOD if letter == "p" else BAD, started_at=f"2026-11-30T1{side}:00:{i:02d}Z",
            )
            for case, letters in outcomes.items()
            for i, letter in enumerate(letters[side], start=1)
        ]  # fmt: skip
        traces_ingest(project=actors.acme, payload={"traces": runs})
        gate_runs.append(gate_request(project=actors.acme, dataset_name="desk", experiment_name=experiment))
    return gate_runs


@pytest.fixture
def site(transactional_db):
    actors = actors_create()
    demo = demo_data_load(project=actors.acme, user=actors.alice)
    trials = _trials(actors)
    return actors, demo, trials


def _pages(demo, trials):
    return {
        "runs": "/p/acme/runs/",
        "run": "/p/acme/runs/v2-quote_focus_pro_3h/",
        "datasets": "/p/acme/datasets/",
        "case": f"/p/acme/cases/{demo[1].cases.get(name='quote_focus_pro_3h').case_id}/",
        "experiments": "/p/acme/experiments/",
        "compare": "/p/acme/experiments/compare/?base=v1&candidate=v2",
        "compare-trials": "/p/acme/experiments/compare/?base=t1&candidate=t2&show=all",
        "gate-runs": "/p/acme/gate-runs/",
        "gate-run": f"/p/acme/gate-runs/{demo[1].pk}/",
        "gate-run-trials": f"/p/acme/gate-runs/{trials[1].pk}/?show=all",
        "passes": "/p/acme/passes/",
        "pass-new": "/p/acme/passes/new/?scorers=answered&experiment=v2",
        "review": "/p/acme/review/",
    }


def test_every_page_fits_390_and_1440_pixels_and_passes_axe(page, site, artifacts_dir):
    actors, demo, trials = site
    log_in(page, "bob", "/p/acme/runs/")
    problems = []
    failed_requests = []
    page.on("response", lambda r: failed_requests.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        for name, path in _pages(demo, trials).items():
            response = page.goto(path)
            assert response.status == 200, path
            overflow = page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
            if overflow > 0:
                problems.append(f"{name} at {width}px is {overflow}px wider than the screen")
            page.screenshot(path=str(artifacts_dir / f"page-{name}-{width}.png"), full_page=True)
            if width == WIDTHS[0]:
                problems += [f"{name}: {violation}" for violation in axe_violations(page)]
    assert not problems, "\n".join(problems)
    assert not failed_requests  # no favicon or stylesheet missing on any page


def test_select_all_ticks_every_run_on_the_page_and_the_capture_sits_above_the_list(page, site):
    log_in(page, "bob", "/p/acme/runs/")
    boxes = page.locator('input[name="trace_ids"]')
    assert boxes.count() > 1
    assert not page.locator("#id_new_dataset").is_visible()  # folded until a run is ticked
    page.check("#select-all")
    assert all(boxes.nth(i).is_checked() for i in range(boxes.count()))
    assert page.locator("#id_new_dataset").is_visible()
    capture = page.locator("details.bulk").bounding_box()
    assert capture["y"] < page.locator("table.runs").bounding_box()["y"]
