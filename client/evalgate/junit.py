"""The verdict as JUnit XML, one testcase per case, for every CI's test report."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Any

from .files import parent_ensure
from .lines import bar_move_text, baseline_of, case_evidence, case_findings, case_measured, case_passed, number_text

_XML_INVALID = re.compile("[^\x09\x0a\x0d\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _xml(value: Any) -> str:
    """Text safe for XML 1.0: ElementTree escapes markup but writes control characters as is."""
    return _XML_INVALID.sub(lambda m: f"\\x{ord(m.group()):02x}", str(value))


def _seconds(case: dict) -> str:
    """The run's latency in seconds, as JUnit's ``time`` (three decimals, as Surefire's schema wants)."""
    try:
        return f"{max(float(case.get('latency_ms')), 0.0) / 1000:.3f}"
    except (TypeError, ValueError):
        return "0.000"


def _case_report(case: dict) -> str:
    """The body of a JUnit failure: what failed in words, reasons, every check, the run."""
    lines = [*case_findings(case), ""]
    lines += [str(r) for r in case.get("reasons") or []]
    checks = [c for c in case.get("checks") or [] if isinstance(c, dict)]
    if checks:
        lines += ["", "checks:"]
        for check in checks:
            reason = check.get("reason")
            lines.append(f"  {check.get('scorer')}: {check.get('status')}" + (f" ({reason})" if reason else ""))
    if case.get("trace_id"):
        lines += ["", f"trace: {case['trace_id']}"]
    if case.get("run_url"):
        lines.append(f"run: {case['run_url']}")
    return "\n".join(lines)


def _property_text(value: Any) -> str:
    return number_text(value) if isinstance(value, float) else _xml(value)


def _properties(gate: dict) -> ET.Element | None:
    """The suite's figures as ``<property>`` elements (None when there are none)."""
    name, rate = baseline_of(gate)
    figures = (
        ("verdict", gate.get("verdict")),
        ("experiment", gate.get("experiment")),
        ("baseline", name),
        ("baseline_pass_rate", rate),
        ("pass_rate", gate.get("pass_rate")),
        ("floor", gate.get("floor")),
        ("delta", gate.get("delta")),
        ("gate_run_id", gate.get("gate_run_id")),
        ("gate_run_url", gate.get("url")),
        ("policy_revision", gate.get("policy_revision")),
    )
    present = [(key, value) for key, value in figures if value is not None]
    present += [("bar_moved", bar_move_text(m)) for m in gate.get("bar_moved") or [] if isinstance(m, dict)]
    if not present:  # some readers want at least one <property> in <properties>
        return None
    props = ET.Element("properties")
    for key, value in present:
        ET.SubElement(props, "property", {"name": key, "value": _property_text(value)})
    return props


def _testcase(suite: ET.Element, classname: str, case: dict) -> str | None:
    """Append ``case``'s testcase; returns "failure", "error" or None (passed)."""
    testcase = ET.SubElement(
        suite, "testcase", {"classname": classname, "name": _xml(case.get("name", "?")), "time": _seconds(case)}
    )
    if case_passed(case):
        _flaky_failures(testcase, case)
        return None
    outcome = "failure" if case_measured(case) else "error"
    # type names the categories that failed (the server's failed_checks); an unmeasured
    # case whose checks only abstained has none.
    kind = ",".join(str(c) for c in case.get("failed_checks") or []) or (
        "gate" if outcome == "failure" else "not_measured"
    )
    message = " ".join(case_evidence(case))
    if len(case.get("trial_results") or []) > 1:
        message = f"{case.get('passed_trials', 0)} of {case.get('trials', 0)} trials passed: {message}"
    ET.SubElement(testcase, outcome, {"message": _xml(message), "type": _xml(kind)}).text = _xml(_case_report(case))
    if case.get("run_url"):
        ET.SubElement(testcase, "system-out").text = _xml(f"run: {case['run_url']}")
    return outcome


def _flaky_failures(testcase: ET.Element, case: dict) -> None:
    """A passing flaky case carries one ``<flakyFailure>`` per failed trial (the Surefire convention)."""
    for trial in case.get("trial_results") or []:
        if trial.get("passed") is False:
            kind = ",".join(str(c) for c in trial.get("failed_checks") or []) or "gate"
            message = f"trial {trial.get('trial')} failed ({kind}), run {trial.get('trace_id')}"
            flaky = ET.SubElement(testcase, "flakyFailure", {"message": _xml(message), "type": _xml(kind)})
            ET.SubElement(flaky, "stackTrace").text = _xml(message)


def junit_xml(gate: dict) -> ET.Element:
    """``<testsuites>`` with one suite for the dataset and one testcase per case.

    Valid against Jenkins' junit-10.xsd (the whole document) and Maven Surefire's test
    report schema (the ``<testsuite>``). A failed case gets ``<failure>``; one that could
    not be measured (a gating check abstained) gets ``<error>``. A FAIL that no case
    explains (a regression against the baseline) adds a ``gate verdict`` testcase, so a
    red build always shows a red test.
    """
    dataset = str(gate.get("dataset") or "")
    cases = gate.get("cases") or []
    classname = _xml(f"evalsite.{dataset}")
    suite = ET.Element("testsuite", {"name": _xml(f"evalsite gate: {dataset}")})
    props = _properties(gate)
    if props is not None:
        suite.append(props)
    outcomes = [_testcase(suite, classname, case) for case in cases]
    tests, failures, errors = len(cases), outcomes.count("failure"), outcomes.count("error")
    if gate.get("verdict") == "FAIL" and not failures and not errors:
        blocked = "; ".join(str(b) for b in gate.get("blocked_by") or []) or "the gate said FAIL"
        testcase = ET.SubElement(suite, "testcase", {"classname": classname, "name": "gate verdict", "time": "0.000"})
        ET.SubElement(testcase, "failure", {"message": _xml(blocked), "type": "verdict"}).text = _xml(blocked)
        tests, failures = tests + 1, failures + 1
    total_time = f"{sum(float(_seconds(c)) for c in cases):.3f}"
    counts = {"tests": str(tests), "failures": str(failures), "errors": str(errors)}
    suite.attrib.update({**counts, "skipped": "0", "time": total_time})
    root = ET.Element("testsuites", {"name": "evalsite", **counts, "time": total_time})
    root.append(suite)
    return root


def undecided_junit(dataset: str, message: str) -> ET.Element:
    suite = ET.Element(
        "testsuite",
        {"name": _xml(f"evalsite gate: {dataset}"), "tests": "1", "failures": "0", "errors": "1", "skipped": "0"},
    )
    testcase = ET.SubElement(
        suite, "testcase", {"classname": _xml(f"evalsite.{dataset}"), "name": "gate verdict", "time": "0.000"}
    )
    ET.SubElement(testcase, "error", {"message": _xml(message), "type": "undecided"}).text = _xml(message)
    root = ET.Element("testsuites", {"name": "evalsite", "tests": "1", "failures": "0", "errors": "1"})
    root.append(suite)
    return root


def write_junit(root: ET.Element, path: str) -> None:
    parent_ensure(path)
    ET.indent(root)
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)
