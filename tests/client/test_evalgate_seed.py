"""The seed's regression gate through evalgate's Python API, against a live server.

The worked example (the clean gate, then the seed's regression) and the three
exercises run as the seed writes them, with ``run_regression_gate(CASE_SET, agent,
overrides, dataset=..., experiment=...)``; their printed lines are the seed's, byte for
byte. The verdicts are the server's gate, not recomputed by the client.
"""

import pytest

import evalgate
from evalgate import CaseResult, run_case, run_regression_gate, summarize_failures
from examples.reservo.tracing import reservo_agent

SEED_CLEAN = """\
GATE: PASS (5/5)
  quote_focus_pro_3h                     PASS
  quote_focus_basic_3h                   PASS
  book_focus_pro_3h_ana                  PASS
  book_boardroom_pro_1h_sofia            PASS
  book_and_cancel_studio_basic_1h_diego  PASS
"""
SEED_REGRESSED = """\
GATE: FAIL (4/5)
  quote_focus_pro_3h                     FAIL  -- tool_choice_ok=False actual_tools=['book_room']
  quote_focus_basic_3h                   PASS
  book_focus_pro_3h_ana                  PASS
  book_boardroom_pro_1h_sofia            PASS
  book_and_cancel_studio_basic_1h_diego  PASS
"""

# The seed's own scripts, as written there.
regressed_script = [
    {"stop_reason": "tool_use", "content": [
        {"type": "tool_use", "id": "toolu_01", "name": "book_room",
         "input": {"room": "Focus", "tier": "pro", "hours": 3, "member": "Ana"}}]},
    {"stop_reason": "end_turn", "content": [
        {"type": "text", "text": "Reservé Focus pro 3h para Ana."}]},
]  # fmt: skip
no_cancel_script = [
    {"stop_reason": "tool_use", "content": [
        {"type": "tool_use", "id": "toolu_01", "name": "book_room",
         "input": {"room": "Studio", "tier": "basic", "hours": 1, "member": "Diego"}}]},
    {"stop_reason": "end_turn", "content": [
        {"type": "text", "text": "Reservé Studio basic 1h para Diego."}]},
]  # fmt: skip


@pytest.fixture
def gate(reservo):
    """``gate(experiment, overrides=None)``: the seed's run_regression_gate over the live golden set."""
    case_set = evalgate.fetch_cases(reservo, "reservo")

    def run(experiment, overrides=None):
        return run_regression_gate(
            case_set, reservo_agent, overrides, dataset="reservo", experiment=experiment, client=reservo
        )

    run.case_set = case_set
    return run


def test_worked_example_part_1_the_clean_gate_passes_five_of_five(gate, capsys):
    report = gate("seed-clean")
    print("GATE:", "PASS" if report.passed else "FAIL", f"({sum(c.passed for c in report.cases)}/{len(report.cases)})")
    for c in report.cases:
        print(f"  {c.name:38} {'PASS' if c.passed else 'FAIL'}")
    report.print()

    assert capsys.readouterr().out == SEED_CLEAN + SEED_CLEAN


def test_worked_example_part_2_the_regression_fails_four_of_five(gate, capsys):
    report2 = gate("seed-regressed", overrides={"quote_focus_pro_3h": regressed_script})
    print(
        "GATE:", "PASS" if report2.passed else "FAIL", f"({sum(c.passed for c in report2.cases)}/{len(report2.cases)})"
    )
    for c in report2.cases:
        status = "PASS" if c.passed else "FAIL"
        line = f"  {c.name:38} {status}"
        if not c.passed:
            line += f"  -- tool_choice_ok={c.tool_choice_ok} actual_tools={c.actual_tools}"
        print(line)
    report2.print()

    assert capsys.readouterr().out == SEED_REGRESSED + SEED_REGRESSED
    assert report2.verdict == "FAIL" and report2.url.endswith(f"/gate-runs/{report2.gate_run_id}/")
    broken = report2.case("quote_focus_pro_3h")
    assert (broken.schema_errors, broken.output_errors) == ([], [])  # not checked: the wrong tool ran
    assert broken.run_url.endswith("/runs/" + broken.trace_id + "/")


def test_exercise_1_a_fail_on_another_case(gate, capsys):
    report = gate("seed-exercise-1", overrides={"book_and_cancel_studio_basic_1h_diego": no_cancel_script})
    print("GATE:", "PASS" if report.passed else "FAIL", f"({sum(c.passed for c in report.cases)}/{len(report.cases)})")
    broken = next(c for c in report.cases if not c.passed)
    print("caso roto:", broken.name, "tools obtenidas:", broken.actual_tools)

    assert capsys.readouterr().out == (
        "GATE: FAIL (4/5)\ncaso roto: book_and_cancel_studio_basic_1h_diego tools obtenidas: ['book_room']\n"
    )


def test_exercise_2_two_regressions_at_once(gate, capsys):
    report = gate(
        "seed-exercise-2",
        overrides={
            "quote_focus_pro_3h": regressed_script,
            "book_and_cancel_studio_basic_1h_diego": no_cancel_script,
        },
    )
    print("GATE:", "PASS" if report.passed else "FAIL", f"({sum(c.passed for c in report.cases)}/{len(report.cases)})")
    for c in report.cases:
        if not c.passed:
            print("  roto:", c.name)

    assert capsys.readouterr().out == (
        "GATE: FAIL (3/5)\n  roto: quote_focus_pro_3h\n  roto: book_and_cancel_studio_basic_1h_diego\n"
    )


def test_exercise_3_failures_summarised_by_check_category(gate, capsys):
    report2 = gate("seed-exercise-3", overrides={"quote_focus_pro_3h": regressed_script})
    print(summarize_failures(report2))
    print(report2.summarize_failures())

    assert capsys.readouterr().out == "{'quote_focus_pro_3h': ['tool_choice']}\n" * 2


def test_overrides_touch_the_named_case_only(gate):
    report = gate("seed-overrides", overrides={"quote_focus_pro_3h": regressed_script})

    runs = {c.name: c for c in report.cases}
    assert [name for name, c in runs.items() if not c.passed] == ["quote_focus_pro_3h"]
    assert runs["quote_focus_basic_3h"].actual_tools == ["quote_room"]


def test_run_case_runs_one_case_and_returns_the_servers_result_for_it(gate, reservo):
    case = gate.case_set[0]

    result = run_case(case, reservo_agent, regressed_script, dataset="reservo", experiment="one-case", client=reservo)

    assert isinstance(result, CaseResult)
    assert (result.name, result.passed, result.tool_choice_ok, result.actual_tools) == (
        "quote_focus_pro_3h", False, False, ["book_room"],
    )  # fmt: skip
    assert (
        result.line()
        == "  quote_focus_pro_3h                     FAIL  -- tool_choice_ok=False actual_tools=['book_room']"
    )


def test_an_agent_that_raises_fails_its_case_and_the_gate_goes_on(gate, reservo):
    def agent(case, run, replacement=None):
        if case["name"] == "quote_focus_basic_3h":
            raise RuntimeError("the model timed out")
        return reservo_agent(case, run, replacement)

    report = run_regression_gate(gate.case_set, agent, dataset="reservo", experiment="seed-raises", client=reservo)

    assert [c.name for c in report.cases if not c.passed] == ["quote_focus_basic_3h"]
    assert report.lines()[0] == "GATE: FAIL (4/5)"
