"""How evalgate renders a verdict: the seed's console lines, JUnit XML and Markdown.

The answers are shaped as docs/gate.md documents them; the first 1 + N console lines
are compared byte for byte because CI logs and scripts read them.
"""

import copy
import xml.etree.ElementTree as ET

import evalgate

SEED_NAMES = [
    "quote_focus_pro_3h",
    "quote_focus_basic_3h",
    "book_focus_pro_3h_ana",
    "book_boardroom_pro_1h_sofia",
    "book_and_cancel_studio_basic_1h_diego",
]


def passing_case(name, **fields):
    """A case every gating check passed, as the gate answers it."""
    case = {
        "name": name,
        "case_id": SEED_NAMES.index(name) + 1 if name in SEED_NAMES else 99,
        "case_version": 1,
        "trace_id": f"v2-{name}",
        "passed": True,
        "measured": True,
        "actual_tools": ["quote_room"],
        "tool_choice_ok": True,
        "schema_errors": [],
        "schema_checked": True,
        "output_errors": [],
        "output_checked": True,
        "cost_cents": 0.84,
        "cost_ok": True,
        "latency_ms": 1200,
        "latency_ok": True,
        "checks": [
            {"scorer": "tool_choice", "status": "passed", "reason": "called ['quote_room']", "detail": {}},
            {"scorer": "tool_output_schema", "status": "passed", "reason": "valid", "detail": {"errors": []}},
            {"scorer": "tool_output", "status": "passed", "reason": "matches", "detail": {"mismatches": []}},
        ],
        "failed_checks": [],
        "reasons": [],
    }
    case.update(fields)
    return case


def failing_case(name, *, checks, failed_checks, reasons, **fields):
    return passing_case(name, passed=False, checks=checks, failed_checks=failed_checks, reasons=reasons, **fields)


def regressed_case():
    """quote_focus_pro_3h after the agent booked instead of quoting (docs/gate.md)."""
    return failing_case(
        "quote_focus_pro_3h",
        actual_tools=["book_room"],
        tool_choice_ok=False,
        schema_checked=False,
        output_checked=False,
        latency_ms=1450,
        checks=[
            {
                "scorer": "tool_choice",
                "status": "failed",
                "reason": "expected ['quote_room'], called ['book_room']",
                "detail": {"actual_tools": ["book_room"], "expected_tools": ["quote_room"], "tool_match": "exact"},
            },
            {
                "scorer": "tool_output_schema",
                "status": "abstained",
                "reason": "target_tool_not_called",
                "detail": {"message": "target tool quote_room was not called"},
            },
        ],
        failed_checks=["tool_choice"],
        reasons=["tool_choice: expected ['quote_room'], called ['book_room']"],
    )


def gate_answer(cases=None, **fields):
    """A verdict body; by default the seed's FAIL (4/5) against baseline v1."""
    if cases is None:
        cases = [regressed_case()] + [passing_case(name) for name in SEED_NAMES[1:]]
    passed = sum(1 for c in cases if c["passed"])
    body = {
        "gate_run_id": 17,
        "status": "done",
        "dataset": "reservo",
        "experiment": "v2",
        "verdict": "PASS" if passed == len(cases) else "FAIL",
        "passed": passed == len(cases),
        "passed_cases": passed,
        "total_cases": len(cases),
        "unmeasured_cases": sum(1 for c in cases if not c["measured"]),
        "pass_rate": passed / len(cases) if cases else None,
        "floor": 1.0,
        "max_abstained": 0,
        "baseline": {"experiment": "v1", "pass_rate": 1.0},
        "delta": passed / len(cases) - 1.0 if cases else None,
        "blocked_by": [] if passed == len(cases) else [f"pass rate {passed / len(cases):.3f} is below the floor 1.000"],
        "comparison": [],
        "cases": cases,
    }
    body.update(fields)
    return body


def pass_answer():
    return gate_answer([passing_case(name) for name in SEED_NAMES])


# ------------------------------------------------------------------ console lines


def test_it_prints_the_seeds_fail_block_byte_for_byte():
    lines = evalgate.format_verdict(gate_answer()).splitlines()

    assert lines[:6] == [
        "GATE: FAIL (4/5)",
        "  quote_focus_pro_3h                     FAIL  -- tool_choice_ok=False actual_tools=['book_room']",
        "  quote_focus_basic_3h                   PASS",
        "  book_focus_pro_3h_ana                  PASS",
        "  book_boardroom_pro_1h_sofia            PASS",
        "  book_and_cancel_studio_basic_1h_diego  PASS",
    ]


def test_it_prints_the_seeds_pass_block_byte_for_byte():
    lines = evalgate.format_verdict(pass_answer()).splitlines()

    assert lines[:6] == [
        "GATE: PASS (5/5)",
        "  quote_focus_pro_3h                     PASS",
        "  quote_focus_basic_3h                   PASS",
        "  book_focus_pro_3h_ana                  PASS",
        "  book_boardroom_pro_1h_sofia            PASS",
        "  book_and_cancel_studio_basic_1h_diego  PASS",
    ]


def test_it_follows_the_case_lines_with_the_figures_and_the_failures():
    text = evalgate.format_verdict(gate_answer())

    after_cases = text.splitlines()[6:]
    assert after_cases[0] == ""
    assert after_cases[1] == "floor: 1.000  pass rate: 0.800  baseline v1: 1.000  delta: -0.200"
    assert "blocked by: pass rate 0.800 is below the floor 1.000" in after_cases
    failures = after_cases[after_cases.index("Failures:") :]
    assert failures[1:3] == [
        "  quote_focus_pro_3h",
        "    tool_choice: expected ['quote_room'], called ['book_room']",
    ]


def test_it_prints_no_failures_block_for_a_pass():
    text = evalgate.format_verdict(pass_answer())

    assert "Failures:" not in text
    assert "floor: 1.000  pass rate: 1.000  baseline v1: 1.000  delta: 0.000" in text.splitlines()


def test_it_says_baseline_none_when_there_is_no_baseline():
    text = evalgate.format_verdict(gate_answer(baseline=None, delta=None))

    assert "floor: 1.000  pass rate: 0.800  baseline: none" in text.splitlines()


def test_it_signs_an_improvement_over_the_baseline():
    answer = gate_answer(pass_rate=0.9, baseline={"experiment": "v1", "pass_rate": 0.8}, delta=0.1, floor=0.8)

    assert "floor: 0.800  pass rate: 0.900  baseline v1: 0.800  delta: +0.100" in evalgate.format_verdict(answer)


def test_it_shows_each_kind_of_field_evidence_in_a_fixed_order():
    case = failing_case(
        "quote_focus_basic_3h",
        schema_errors=["total_cents: 'x' is not of type 'integer'"],
        output_errors=["total_cents: expected 5000, got 'x'"],
        cost_cents=12.5,
        cost_ok=False,
        latency_ms=9000,
        latency_ok=False,
        checks=[
            {"scorer": "latency_budget", "status": "failed", "reason": "9000 ms > 5000 ms"},
            {"scorer": "cost_budget", "status": "failed", "reason": "12.5 > 2"},
            {"scorer": "tool_output", "status": "failed", "reason": "1 mismatch"},
            {"scorer": "tool_output_schema", "status": "failed", "reason": "1 error"},
            {"scorer": "tool_choice", "status": "passed", "reason": "ok"},
        ],
        failed_checks=["schema", "output", "threshold"],
        reasons=["schema: ...", "output: ...", "threshold: ..."],
    )

    assert evalgate.case_line(case) == (
        "  quote_focus_basic_3h                   FAIL  -- "
        "schema_errors=[\"total_cents: 'x' is not of type 'integer'\"] "
        "output_errors=[\"total_cents: expected 5000, got 'x'\"] "
        "cost_ok=False cost_cents=12.5 "
        "latency_ok=False latency_ms=9000"
    )


def test_it_shows_every_failed_check_of_one_case():
    case = failing_case(
        "quote_focus_pro_3h",
        actual_tools=["book_room", "cancel_booking"],
        tool_choice_ok=False,
        cost_cents=3,
        cost_ok=False,
        latency_ms=7000,
        latency_ok=False,
        checks=[
            {"scorer": "tool_choice", "status": "failed", "reason": "wrong tools"},
            {"scorer": "tool_output", "status": "abstained", "reason": "target_tool_not_called"},
            {"scorer": "cost_budget", "status": "failed", "reason": "3 > 2"},
            {"scorer": "latency_budget", "status": "failed", "reason": "7000 > 5000"},
            {"scorer": "no_errors", "status": "failed", "reason": "span s2 (book_room) failed"},
        ],
        failed_checks=["tool_choice", "threshold", "error"],
        reasons=["tool_choice: wrong tools", "threshold: cost", "threshold: latency", "error: span failed"],
    )

    assert evalgate.case_evidence(case) == [
        "tool_choice_ok=False actual_tools=['book_room', 'cancel_booking']",
        "cost_ok=False cost_cents=3",
        "latency_ok=False latency_ms=7000",
        "no_errors=span s2 (book_room) failed",
    ]


def test_it_shows_other_failed_and_abstained_scorers_as_scorer_equals_reason():
    case = failing_case(
        "book_focus_pro_3h_ana",
        measured=False,
        checks=[
            {"scorer": "tool_choice", "status": "passed", "reason": "ok"},
            {"scorer": "tool_output_schema", "status": "abstained", "reason": "target tool book_room was not called"},
            {"scorer": "contains", "status": "failed", "reason": "'Ana' not in the answer"},
            {"scorer": "politeness", "status": "abstained", "reason": "judge_unreachable"},
            {"scorer": "answered", "status": "passed", "reason": "ok"},
        ],
        failed_checks=["judge", "output"],
        reasons=["..."],
    )

    line = evalgate.case_line(case)

    assert line.endswith(
        "FAIL  -- tool_output_schema=target tool book_room was not called "
        "contains='Ana' not in the answer politeness=judge_unreachable"
    )


def test_it_shows_error_and_the_reason_for_a_case_with_no_run():
    case = failing_case(
        "book_boardroom_pro_1h_sofia",
        trace_id=None,
        measured=False,
        actual_tools=[],
        tool_choice_ok=False,
        checks=[],
        failed_checks=["error"],
        reasons=["no run recorded for this case"],
    )

    assert evalgate.case_line(case) == (
        "  book_boardroom_pro_1h_sofia            FAIL  -- error=no run recorded for this case"
    )


def test_it_prints_the_gate_runs_url_after_the_verdict_lines_never_among_them():
    url = "https://evals.example.com/p/acme/gate-runs/17/"
    cases = [regressed_case()] + [passing_case(n) for n in SEED_NAMES[1:]]
    cases[0]["run_url"] = "https://evals.example.com/p/acme/runs/v2-quote_focus_pro_3h/"

    lines = evalgate.format_verdict(gate_answer(cases, url=url)).splitlines()

    assert lines[:6] == evalgate.format_verdict(gate_answer()).splitlines()[:6]
    assert f"gate run: 17  {url}" in lines[6:]
    failures = lines[lines.index("Failures:") :]
    assert failures[-1] == "    run: https://evals.example.com/p/acme/runs/v2-quote_focus_pro_3h/"


def test_it_keeps_a_name_longer_than_the_column_whole():
    name = "a_case_name_that_is_much_longer_than_thirty_eight_chars"

    assert evalgate.case_line(passing_case(name)) == f"  {name} PASS"


# ------------------------------------------------------------------------- JUnit


def junit_of(answer):
    root = ET.fromstring(ET.tostring(evalgate.junit_xml(answer), encoding="unicode"))
    return root, root.find("testsuite")


def test_it_writes_one_junit_testcase_per_case_with_a_failure_for_the_regression():
    root, suite = junit_of(gate_answer())

    assert root.tag == "testsuites"
    assert suite.get("name") == "evalsite gate: reservo"
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("5", "1", "0")
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == SEED_NAMES
    assert {c.get("classname") for c in cases} == {"evalsite.reservo"}
    assert cases[0].get("time") == "1.450"
    failure = cases[0].find("failure")
    assert failure.get("message") == "tool_choice_ok=False actual_tools=['book_room']"
    assert "tool_choice: expected ['quote_room'], called ['book_room']" in failure.text
    assert all(c.find("failure") is None and c.find("error") is None for c in cases[1:])


def test_it_reports_an_unmeasured_case_as_a_junit_error_not_a_failure():
    no_run = failing_case(
        "book_boardroom_pro_1h_sofia",
        trace_id=None,
        measured=False,
        checks=[],
        failed_checks=["error"],
        reasons=["no run recorded for this case"],
    )
    cases = [regressed_case(), no_run] + [passing_case(n) for n in SEED_NAMES[1:3]]

    _, suite = junit_of(gate_answer(cases))

    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("4", "1", "1")
    testcase = suite.find("testcase[@name='book_boardroom_pro_1h_sofia']")
    assert testcase.find("failure") is None
    assert testcase.find("error").get("message") == "error=no run recorded for this case"


def test_it_escapes_markup_and_control_characters_in_junit(tmp_path):
    name = 'quote <"Focus"> & co\x07'
    answer = gate_answer([regressed_case(), passing_case(name)])
    path = tmp_path / "junit.xml"

    evalgate.write_junit(evalgate.junit_xml(answer), str(path))

    suite = ET.parse(path).getroot().find("testsuite")
    assert suite.findall("testcase")[1].get("name") == 'quote <"Focus"> & co\\x07'


def test_it_adds_a_failing_verdict_testcase_when_no_case_explains_a_fail():
    answer = pass_answer()
    answer.update(verdict="FAIL", passed=False, blocked_by=["tool_choice regressed by -0.150 against v1"])

    _, suite = junit_of(answer)

    assert (suite.get("tests"), suite.get("failures")) == ("6", "1")
    verdict = suite.find("testcase[@name='gate verdict']")
    assert verdict.find("failure").get("message") == "tool_choice regressed by -0.150 against v1"


# ---------------------------------------------------------------------- Markdown


def table_rows(markdown):
    return [line for line in markdown.splitlines() if line.startswith("| ")][1:]


def unescaped_pipes(line):
    return sum(1 for i, ch in enumerate(line) if ch == "|" and (i == 0 or line[i - 1] != "\\"))


def test_it_summarises_in_markdown_with_failures_first():
    answer = gate_answer([passing_case(n) for n in SEED_NAMES[1:3]] + [regressed_case()])

    markdown = evalgate.format_markdown(answer)

    assert markdown.startswith("## \u274c evalsite gate: FAIL (2/3)\n")
    assert "floor: 1.000 · pass rate: 0.667 · baseline v1: 1.000 · delta: -0.333" in markdown
    assert "| case | result | what failed |" in markdown
    rows = table_rows(markdown)
    assert rows[0] == "| `quote_focus_pro_3h` | FAIL | tools called: book\\_room |"
    assert [r.split("|")[2].strip() for r in rows] == ["FAIL", "PASS", "PASS"]


def test_it_links_the_gate_run_and_each_failing_run_in_markdown():
    url = "https://evals.example.com/p/acme/gate-runs/17/"
    run_url = "https://evals.example.com/p/acme/runs/v2-quote_focus_pro_3h/"
    cases = [regressed_case()] + [passing_case(n) for n in SEED_NAMES[1:]]
    cases[0]["run_url"] = run_url

    markdown = evalgate.format_markdown(gate_answer(cases, url=url))

    assert markdown.startswith(f"## \u274c [evalsite gate: FAIL (4/5)]({url})\n")
    assert table_rows(markdown)[0].startswith(f"| [`quote_focus_pro_3h`]({run_url}) | FAIL |")
    assert f"[The gate run]({url}) has every case, check and run." in markdown


def test_it_writes_evidence_as_words_not_python_values_in_markdown():
    case = failing_case(
        "quote_focus_basic_3h",
        schema_errors=["Additional properties are not allowed ('hourly_cents' was unexpected)"],
        output_errors=["hours: expected 3, got 2"],
        cost_cents=0.54659999,
        cost_ok=False,
        latency_ms=1850,
        latency_ok=False,
        checks=[{"scorer": "answer_relevance", "status": "abstained", "reason": "judge_unreachable"}],
        failed_checks=["schema", "output", "threshold"],
        reasons=["..."],
    )

    row = table_rows(evalgate.format_markdown(gate_answer([case])))[0]

    assert row.split(" | ")[2].removesuffix(" |").split("<br>") == [
        "schema: Additional properties are not allowed ('hourly\\_cents' was unexpected)",
        "output: hours: expected 3, got 2",
        "cost 0.5466 cents is over the threshold",
        "latency 1850 ms is over the threshold",
        "answer\\_relevance: not measured, judge\\_unreachable",
    ]
    assert "=[" not in row and "_ok=" not in row


def test_it_stays_short_on_ten_thousand_cases_failures_first_and_the_rest_counted():
    failing = [
        failing_case(
            f"broken_{i:05d}",
            tool_choice_ok=False,
            actual_tools=["book_room"],
            checks=[],
            failed_checks=["tool_choice"],
            reasons=["tool_choice: wrong"],
        )  # fmt: skip
        for i in range(300)
    ]
    cases = [passing_case(f"case_{i:05d}") for i in range(9_700)] + failing

    markdown = evalgate.format_markdown(gate_answer(cases))

    rows = table_rows(markdown)
    assert len(rows) == 50
    assert all(row.split(" | ")[1] == "FAIL" for row in rows)
    assert rows[0].startswith("| `broken_00000` |")
    assert "250 more failed cases and 9700 passing cases are not listed here" in markdown
    assert len(markdown.encode()) < 16 * 1024


def test_it_escapes_pipes_in_markdown_table_cells():
    case = failing_case(
        "odd|name",
        output_errors=["status: expected 'a|b', got 'c'"],
        checks=[{"scorer": "tool_output", "status": "failed", "reason": "1 mismatch"}],
        failed_checks=["output"],
        reasons=["output: status expected 'a|b'"],
    )

    rows = table_rows(evalgate.format_markdown(gate_answer([case])))

    assert "odd\\|name" in rows[0]
    assert "expected 'a\\|b'" in rows[0]
    assert unescaped_pipes(rows[0]) == 4  # three cells, whatever the text held


def test_it_uses_a_pass_heading_and_no_failures_section_for_a_pass():
    markdown = evalgate.format_markdown(pass_answer())

    assert markdown.startswith("## \u2705 evalsite gate: PASS (5/5)\n")
    assert [row.split(" | ")[1] for row in table_rows(markdown)] == ["PASS"] * 5


def test_it_does_not_change_the_answer_it_renders():
    answer = gate_answer()
    before = copy.deepcopy(answer)

    evalgate.format_verdict(answer)
    evalgate.junit_xml(answer)
    evalgate.format_markdown(answer)

    assert answer == before


BAR_MOVED = [
    {"kind": "policy", "what": "trial_pass_ratio 1.0 → 0.2", "by": "key release", "at": "2026-12-02T10:00:00+00:00",
     "reason": "flaky vendor API", "revision": 4},
    {"kind": "case", "what": "case 'quote_focus_pro_3h' quarantined", "by": "alice", "at": "2026-12-02T09:00:00+00:00",
     "reason": "tax rules changed"},
]  # fmt: skip


def test_it_prints_what_moved_the_bar_after_the_case_lines():
    text = evalgate.format_verdict(gate_answer(bar_moved=BAR_MOVED, bar_moved_more=2))
    lines = text.splitlines()
    at = lines.index("bar moved since baseline:")
    assert at > 6  # after the seed's 1 + 5 lines, which stay exact
    assert lines[at + 1 : at + 4] == [
        "  policy: trial_pass_ratio 1.0 → 0.2 (key release, 2026-12-02T10:00:00+00:00; why: flaky vendor API)",
        "  case: case 'quote_focus_pro_3h' quarantined (alice, 2026-12-02T09:00:00+00:00; why: tax rules changed)",
        "  ... and 2 more (see the gate run)",
    ]
    assert "bar moved" not in evalgate.format_verdict(gate_answer())


def test_markdown_and_junit_carry_the_moves_of_the_bar():
    answer = gate_answer(bar_moved=BAR_MOVED, policy_revision=4)
    markdown = evalgate.format_markdown(answer)
    assert "**Bar moved since baseline:**" in markdown
    assert "- policy: trial\\_pass\\_ratio 1.0 → 0.2 (key release" in markdown
    _, suite = junit_of(answer)
    props = {p.get("name"): p.get("value") for p in suite.iter("property") if p.get("name") != "bar_moved"}
    moved = [p.get("value") for p in suite.iter("property") if p.get("name") == "bar_moved"]
    assert props["policy_revision"] == "4"
    assert moved[1].startswith("case: case 'quote_focus_pro_3h' quarantined (alice")


def test_it_warns_of_a_run_whose_input_is_not_its_cases():
    answer = pass_answer()
    answer["input_mismatches"] = [{"case": "quote_focus_basic_3h", "trace_id": "v2-quote_focus_pro_3h"}]
    lines = evalgate.format_verdict(answer).splitlines()
    assert lines[:6] == evalgate.format_verdict(pass_answer()).splitlines()[:6]
    warning = (
        "warning: run v2-quote_focus_pro_3h does not carry the input of its case quote_focus_basic_3h: "
        "attached to the wrong case?"
    )
    assert warning in lines


def test_it_prints_each_trial_re_sent_after_a_failure_with_both_outcomes():
    answer = pass_answer()
    answer["retried"] = [
        {
            "case": "quote_focus_pro_3h",
            "trial": 1,
            "superseded": {"trace_id": "v2-quote_focus_pro_3h@1", "passed": False},
            "counted": {"trace_id": "v2-quote_focus_pro_3h@2", "passed": True},
        }
    ]
    lines = evalgate.format_verdict(answer).splitlines()
    assert lines[:6] == evalgate.format_verdict(pass_answer()).splitlines()[:6]
    assert (
        "retried: quote_focus_pro_3h trial 1: v2-quote_focus_pro_3h@1 FAIL, then v2-quote_focus_pro_3h@2 PASS (flaky)"
        in lines
    )
