"""evalgate's JUnit report is valid for the readers CI uses: Jenkins' junit-10.xsd and Surefire's schema.

Jenkins' schema describes the whole document (``<testsuites>``); Maven Surefire's
describes one ``<testsuite>``, which GitLab, Azure and most report readers also take.
The schema files are in ``schemas/`` with their licences.
"""

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import xmlschema

import evalgate
from evalgate.junit import undecided_junit
from tests.client.test_evalgate_report import SEED_NAMES, failing_case, gate_answer, passing_case, regressed_case

SCHEMAS = Path(__file__).resolve().parent / "schemas"
JENKINS = xmlschema.XMLSchema(SCHEMAS / "junit-10.xsd")
SUREFIRE = xmlschema.XMLSchema(SCHEMAS / "surefire-test-report-3.0.xsd")


def written(root, tmp_path):
    path = tmp_path / "junit.xml"
    evalgate.write_junit(root, str(path))
    return path


def unmeasured_case():
    return failing_case(
        "book_boardroom_pro_1h_sofia",
        measured=False,
        checks=[{"scorer": "answer_relevance", "status": "abstained", "reason": "judge_unreachable", "detail": {}}],
        failed_checks=[],
        reasons=["answer_relevance not measured (judge_unreachable)"],
        run_url="https://evals.example.com/p/acme/runs/v2-book_boardroom_pro_1h_sofia/",
    )


BAR_MOVE = {
    "kind": "policy",
    "what": "max_flaky 0 → none",
    "by": "key release",
    "at": "2026-12-02T10:00:00+00:00",
    "reason": "vendor <outage> & retries",
    "revision": 3,
}

ANSWERS = {
    "seed FAIL": lambda: gate_answer(),
    "PASS": lambda: gate_answer([passing_case(n) for n in SEED_NAMES]),
    "unmeasured and linked": lambda: gate_answer(
        [regressed_case(), unmeasured_case()], url="https://evals.example.com/p/acme/gate-runs/17/"
    ),
    "FAIL no case explains": lambda: gate_answer(
        [passing_case(n) for n in SEED_NAMES], verdict="FAIL", blocked_by=["tool_choice regressed"]
    ),
    "control characters": lambda: gate_answer([passing_case('quote <"Focus"> & co\x07')]),
    "bar moved": lambda: gate_answer(policy_revision=3, bar_moved=[BAR_MOVE]),
}


@pytest.mark.parametrize("answer", ANSWERS.values(), ids=ANSWERS.keys())
def test_the_report_is_valid_for_jenkins_and_its_suite_for_surefire(answer, tmp_path):
    path = written(evalgate.junit_xml(answer()), tmp_path)

    JENKINS.validate(str(path))
    SUREFIRE.validate(ET.tostring(ET.parse(path).getroot().find("testsuite"), encoding="unicode"))


def test_the_report_of_a_gate_that_could_not_decide_is_valid_too(tmp_path):
    path = written(undecided_junit("reservo", "could not decide: connection refused"), tmp_path)

    JENKINS.validate(str(path))
    SUREFIRE.validate(ET.tostring(ET.parse(path).getroot().find("testsuite"), encoding="unicode"))


def test_the_schemas_refuse_what_the_old_report_wrote():
    # skipped on <testsuites> (Jenkins) and <system-out> after the testcases (Surefire)
    old = ET.fromstring(ET.tostring(evalgate.junit_xml(gate_answer())))
    old.set("skipped", "0")
    suite = old.find("testsuite")
    ET.SubElement(suite, "system-out").text = "GATE: FAIL (4/5)"

    assert not JENKINS.is_valid(ET.tostring(old, encoding="unicode"))
    assert not SUREFIRE.is_valid(ET.tostring(suite, encoding="unicode"))


def test_it_rounds_the_figures_for_people():
    answer = gate_answer(pass_rate=0.8, delta=0.8 - 1.0, baseline={"experiment": "v1", "pass_rate": 1.0})
    assert answer["delta"] == -0.19999999999999996

    properties = {p.get("name"): p.get("value") for p in evalgate.junit_xml(answer).iter("property")}

    assert (properties["delta"], properties["pass_rate"], properties["floor"]) == ("-0.2", "0.8", "1")
    assert properties["baseline_pass_rate"] == "1"


def test_its_type_lists_the_failed_categories_only():
    cases = [regressed_case(), unmeasured_case()]
    cases[0]["unmeasured_checks"] = ["schema"]

    suite = evalgate.junit_xml(gate_answer(cases)).find("testsuite")

    failure = suite.find("testcase[@name='quote_focus_pro_3h']/failure")
    error = suite.find("testcase[@name='book_boardroom_pro_1h_sofia']/error")
    assert failure.get("type") == "tool_choice"
    assert error.get("type") == "not_measured"


def test_it_links_the_gate_run_and_each_failing_run():
    suite = evalgate.junit_xml(ANSWERS["unmeasured and linked"]()).find("testsuite")

    properties = {p.get("name"): p.get("value") for p in suite.iter("property")}
    testcase = suite.find("testcase[@name='book_boardroom_pro_1h_sofia']")
    assert properties["gate_run_url"] == "https://evals.example.com/p/acme/gate-runs/17/"
    assert (
        testcase.find("system-out").text == "run: https://evals.example.com/p/acme/runs/v2-book_boardroom_pro_1h_sofia/"
    )
    assert testcase.find("error").text.splitlines()[0] == "answer_relevance: not measured, judge_unreachable"
