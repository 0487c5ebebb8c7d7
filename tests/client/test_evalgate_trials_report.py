"""evalgate reports trials, arguments of tool calls, quarantine and advisory checks, and writes the verdict as JSON."""

import json
import xml.etree.ElementTree as ET

import evalgate
from evalgate.markdown import format_markdown
from tests.client.test_evalgate_junit_schemas import JENKINS, SUREFIRE, written
from tests.client.test_evalgate_report import SEED_NAMES, gate_answer, passing_case, regressed_case


def _trials(case, outcomes, flaky=None):
    results = [
        {"trial": i, "trace_id": f"t{i}", "passed": o, "failed_checks": [] if o else ["tool_choice"]}
        for i, o in enumerate(outcomes, start=1)
    ]
    passed = sum(1 for o in outcomes if o)
    flaky = (0 < passed < len(outcomes)) if flaky is None else flaky
    return {**case, "trials": len(outcomes), "passed_trials": passed, "flaky": flaky, "trial_results": results}


def test_a_case_failing_over_trials_prints_its_counts_and_flaky_first():
    case = _trials(regressed_case(), [True, False, True])
    assert evalgate.case_line(case) == (
        "  quote_focus_pro_3h                     FAIL  -- trials=2/3 flaky tool_choice_ok=False actual_tools=['book_room']"
    )


def test_a_flaky_case_that_passes_under_a_lower_ratio_says_so_and_a_steady_one_does_not():
    flaky = _trials(passing_case("quote_focus_pro_3h"), [True, False, True])
    steady = _trials(passing_case("quote_focus_basic_3h"), [True, True, True])
    assert evalgate.case_line(flaky) == "  quote_focus_pro_3h                     PASS  -- trials=2/3 flaky"
    assert evalgate.case_line(steady) == "  quote_focus_basic_3h                   PASS"


def test_one_trial_prints_exactly_the_seeds_line():
    case = _trials(regressed_case(), [False])
    assert (
        evalgate.case_line(case)
        == "  quote_focus_pro_3h                     FAIL  -- tool_choice_ok=False actual_tools=['book_room']"
    )


def test_wrong_arguments_follow_tool_choices_evidence_as_a_json_list():
    case = {
        **passing_case("book_focus_pro_3h_ana"), "passed": False, "tool_calls_ok": False,
        "tool_call_errors": ["book_room.member: expected 'Ana', got 'Anna'"],
        "checks": [{"scorer": "tool_calls", "status": "failed", "reason": "book_room.member: ...", "detail": {}}],
    }  # fmt: skip
    assert evalgate.case_line(case).endswith(
        "FAIL  -- tool_calls_ok=False tool_call_errors=[\"book_room.member: expected 'Ana', got 'Anna'\"]"
    )


def test_the_summary_adds_pass_hat_k_flaky_quarantine_and_advisory_lines():
    answer = gate_answer(
        k=3, pass_hat_k=0.7333, flaky_cases=1, quarantined_cases=1, advisory=["helpful: advisory, kappa 0.41 on 37"],
        quarantined=[{**passing_case("book_focus_pro_3h_ana"), "passed": False}],
    )  # fmt: skip
    text = evalgate.format_verdict(answer)
    assert "pass^3=0.733 flaky=1" in text and "quarantined=1" in text
    assert "advisory: helpful: advisory, kappa 0.41 on 37" in text
    assert "quarantined: book_focus_pro_3h_ana FAIL (not counted)" in text
    assert text.splitlines()[0] == "GATE: FAIL (4/5)"  # the seed's first line never changes


def test_a_passing_flaky_case_carries_a_flaky_failure_per_failed_trial_valid_for_both_schemas(tmp_path):
    flaky = _trials(passing_case("quote_focus_pro_3h"), [True, False, False, True, True])
    failing = _trials(regressed_case(), [False, True, False])
    answer = gate_answer([failing, flaky, *[passing_case(n) for n in SEED_NAMES[2:]]])
    path = written(evalgate.junit_xml(answer), tmp_path)
    JENKINS.validate(str(path))
    SUREFIRE.validate(ET.tostring(ET.parse(path).getroot().find("testsuite"), encoding="unicode"))
    cases = {c.get("name"): c for c in ET.parse(path).getroot().iter("testcase")}
    flaky_failures = cases["quote_focus_pro_3h"].findall("flakyFailure")
    assert [f.get("message") for f in flaky_failures] == [
        "trial 2 failed (tool_choice), run t2",
        "trial 3 failed (tool_choice), run t3",
    ]
    failure = cases["quote_focus_pro_3h"].find("failure")
    assert failure is None
    failed = [c for c in ET.parse(path).getroot().iter("testcase") if c.find("failure") is not None][0]
    assert failed.find("failure").get("message").startswith("1 of 3 trials passed: trials=1/3 flaky")


def test_the_markdown_summary_shows_each_cases_trials_as_a_strip():
    answer = gate_answer([_trials(regressed_case(), [True, False, True])])
    assert "FAIL \u2713 \u2717 \u2713 flaky" in format_markdown(answer)


def test_json_writes_the_whole_verdict(tmp_path, monkeypatch, capsys):
    from evalgate.cli import verdict_deliver

    answer = gate_answer()
    code = verdict_deliver(answer, json_path=str(tmp_path / "out" / "regression_report.json"))
    assert code == 1
    assert json.loads((tmp_path / "out" / "regression_report.json").read_text("utf-8")) == answer
    assert capsys.readouterr().out.startswith("GATE: FAIL (4/5)")


def test_an_attempt_renames_the_runs_and_numbers_each_cases_trials():
    runs = [
        {"trace_id": "a", "case": "quote", "dataset": "d"},
        {"trace_id": "b", "case": "quote", "dataset": "d"},
        {"trace_id": "c", "case": "book", "dataset": "d", "trial": 7},
        {"trace_id": "d"},
    ]
    out = evalgate.calls.runs_for_attempt(runs, "991-2")
    assert [(r["trace_id"], r.get("trial")) for r in out] == [
        ("a@991-2", 1), ("b@991-2", 2), ("c@991-2", 7), ("d@991-2", None),
    ]  # fmt: skip
    assert runs[0] == {"trace_id": "a", "case": "quote", "dataset": "d"}  # the input is left as it was
