"""Reservo end to end: `python -m examples.reservo` against a live server, as CI would run it."""

import subprocess
import sys

import pytest

from evalsite.projects import api_key_create, project_create
from evalsite.scopes import ADMIN
from examples.reservo import OVERRIDES
from tests.live import ROOT, web_server

CASES = [
    "quote_focus_pro_3h",
    "quote_focus_basic_3h",
    "book_focus_pro_3h_ana",
    "book_boardroom_pro_1h_sofia",
    "book_and_cancel_studio_basic_1h_diego",
]
SEED_FAIL_LINE = "  quote_focus_pro_3h                     FAIL  -- tool_choice_ok=False actual_tools=['book_room']"


@pytest.fixture(scope="module")
def live_url(django_db_setup):
    with web_server(workers=2) as url:
        yield url


@pytest.fixture
def server(live_url, transactional_db):
    """The live server and a key of a fresh project (the database is emptied after each test)."""
    project = project_create(slug="reservo-e2e", name="Reservo")
    _, key = api_key_create(project=project, name="ci", scopes=[ADMIN])
    return live_url, key


def reservo(server, experiment, *overrides, extra=()):
    url, key = server
    args = [sys.executable, "-m", "examples.reservo", "--experiment", experiment, "--url", url, "--key", key]
    for override in overrides:
        args += ["--override", override]
    return subprocess.run([*args, *extra], cwd=ROOT, capture_output=True, text=True, timeout=300)


def policy_put(server, **fields):
    import json
    import urllib.request

    url, key = server
    request = urllib.request.Request(
        f"{url}/v1/api/datasets/reservo/gate-policy", data=json.dumps(fields).encode(), method="PUT",
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
    )  # fmt: skip
    with urllib.request.urlopen(request, timeout=30) as response:
        assert response.status == 200


def case_lines(stdout):
    lines = stdout.splitlines()
    return lines[0], {line[2:40].strip(): line for line in lines[1:6]}


def test_the_clean_golden_set_passes_five_of_five(server):
    result = reservo(server, "clean")
    assert result.returncode == 0, result.stdout + result.stderr
    head, lines = case_lines(result.stdout)
    assert head == "GATE: PASS (5/5)"
    assert [f"  {name:38} PASS" for name in CASES] == [lines[name] for name in CASES]


def test_the_seeds_regression_fails_four_of_five_with_the_seeds_exact_line(server):
    result = reservo(server, "regressed", "quote_focus_pro_3h=quote_books_instead.json")
    assert result.returncode == 1, result.stdout + result.stderr
    head, lines = case_lines(result.stdout)
    assert head == "GATE: FAIL (4/5)"
    assert lines["quote_focus_pro_3h"] == SEED_FAIL_LINE
    assert all(lines[name] == f"  {name:38} PASS" for name in CASES[1:])


EXPECTED_EVIDENCE = {
    "no_cancel": "tool_choice_ok=False actual_tools=['book_room']",
    "quote_wrong_hours": "output_errors=[",
    "quote_with_breakdown": "schema_errors=[",
    "book_long_answer": "cost_ok=False cost_cents=",
    "book_extra_turns": "latency_ok=False latency_ms=",
    "book_wrong_member": "tool_calls_ok=False tool_call_errors=[\"book_room.member: expected 'Ana', got 'Anna'\"]",
}


# Booking for Anna breaks the arguments and, in the booking's result, the member value.
ALSO_BROKEN = {"book_wrong_member": {"output_errors"}}


@pytest.mark.parametrize("script", sorted(EXPECTED_EVIDENCE))
def test_an_override_fails_its_case_for_that_reason_alone(server, script):
    case = OVERRIDES[script]["case"]
    result = reservo(server, f"override-{script}", f"{case}={script}.json")
    assert result.returncode == 1, result.stdout + result.stderr
    head, lines = case_lines(result.stdout)
    assert head == "GATE: FAIL (4/5)"
    evidence = lines[case].split("  -- ", 1)[1]
    assert evidence.startswith(EXPECTED_EVIDENCE[script]), lines[case]
    # Only that check's evidence: no other field or scorer is named.
    others = [e for s, e in EXPECTED_EVIDENCE.items() if e.split("=")[0] != EXPECTED_EVIDENCE[script].split("=")[0]]
    others = [e for e in others if e.split("=")[0] not in ALSO_BROKEN.get(script, ())]
    assert not any(other.split("=")[0] + "=" in evidence for other in others), evidence
    assert all(lines[name] == f"  {name:38} PASS" for name in CASES if name != case)


def test_several_broken_cases_at_once_are_each_named(server):
    result = reservo(
        server,
        "two-broken",
        "quote_focus_pro_3h=quote_books_instead.json",
        "book_and_cancel_studio_basic_1h_diego=no_cancel.json",
    )
    assert result.returncode == 1
    head, lines = case_lines(result.stdout)
    assert head == "GATE: FAIL (3/5)"
    assert lines["quote_focus_pro_3h"] == SEED_FAIL_LINE
    assert lines["book_and_cancel_studio_basic_1h_diego"].endswith(
        "FAIL  -- tool_choice_ok=False actual_tools=['book_room']"
    )


def test_an_unreachable_server_is_exit_code_two():
    args = [
        sys.executable,
        "-m",
        "examples.reservo",
        "--experiment",
        "x",
        "--url",
        "http://127.0.0.1:9",
        "--key",
        "esk_x",
    ]
    result = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "could not" in result.stderr


FLAKY_FAIL_LINE = (
    "  quote_focus_pro_3h                     FAIL  -- trials=2/3 flaky tool_choice_ok=False actual_tools=['book_room']"
)


def test_a_flaky_case_fails_at_pass_hat_k_and_passes_under_a_lower_ratio_still_marked_flaky(server):
    first = reservo(server, "warmup")  # creates the dataset, so its policy can be set
    assert first.returncode == 0, first.stdout + first.stderr
    policy_put(server, trials=3)
    flaky = ["--trials", "3", "--flaky", "quote_focus_pro_3h=2"]
    result = reservo(server, "flaky", extra=flaky)
    assert result.returncode == 1, result.stdout + result.stderr
    head, lines = case_lines(result.stdout)
    assert (head, lines["quote_focus_pro_3h"]) == ("GATE: FAIL (4/5)", FLAKY_FAIL_LINE)
    assert "pass^3=0.800 flaky=1" in result.stdout
    policy_put(server, trials=3, trial_pass_ratio=0.6, reason="two of three trials are enough for this release")
    again = reservo(server, "flaky", extra=flaky)
    assert again.returncode == 0, again.stdout + again.stderr
    head, lines = case_lines(again.stdout)
    assert head == "GATE: PASS (5/5)"
    assert lines["quote_focus_pro_3h"] == "  quote_focus_pro_3h                     PASS  -- trials=2/3 flaky"
