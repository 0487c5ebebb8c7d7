"""The verdict as JUnit XML, one testcase per case, for every CI's test report."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Any

from .files import parent_ensure
from .lines import baseline_of, case_evidence, case_measured, case_passed, format_verdict

_XML_INVALID = re.compile("[^\x09\x0a\x0d\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _xml(value: Any) -> str:
    """Text safe for XML 1.0: ElementTree escapes markup but writes control characters as is."""
    return _XML_INVALID.sub(lambda m: f"\\x{ord(m.group()):02x}", str(value))


def _seconds(latency_ms) -> str:
    try:
        return f"{max(float(latency_ms), 0.0) / 1000:.3f}"
    except (TypeError, ValueError):
        return "0.000"


def _case_report(case: dict) -> str:
    """The body of a JUnit failure: evidence, reasons and every check, for a reader in a CI UI."""
    lines = [" ".join(case_evidence(case)), ""]
    lines += [str(r) for r in case.get("reasons") or []]
    checks = [c for c in case.get("checks") or [] if isinstance(c, dict)]
    if checks:
        lines += ["", "checks:"]
        for check in checks:
            reason = check.get("reason")
            lines.append(f"  {check.get('scorer')}: {check.get('status')}" + (f" ({reason})" if reason else ""))
    if case.get("trace_id"):
        lines += ["", f"trace: {case['trace_id']}"]
    return "\n".join(lines)


def junit_xml(gate: dict) -> ET.Element:
    """``<testsuites>`` with one suite for the dataset and one testcase per case.

    A failed case gets ``<failure>``; one that could not be measured (a gating check
    abstained, or no run) gets ``<error>``. A FAIL that no case explains (a regression
    against the baseline) adds a ``gate verdict`` testcase, so a red build always shows
    a red test.
    """
    dataset = str(gate.get("dataset") or "")
    cases = gate.get("cases") or []
    suite = ET.Element("testsuite", {"name": _xml(f"evalsite gate: {dataset}")})
    name, rate = baseline_of(gate)
    properties = [
        (key, value)
        for key, value in (
            ("verdict", gate.get("verdict")),
            ("experiment", gate.get("experiment")),
            ("baseline", name),
            ("baseline_pass_rate", rate),
            ("pass_rate", gate.get("pass_rate")),
            ("floor", gate.get("floor")),
            ("delta", gate.get("delta")),
            ("gate_run_id", gate.get("gate_run_id")),
        )
        if value is not None
    ]
    if properties:  # the JUnit schema wants at least one <property> in <properties>
        props = ET.SubElement(suite, "properties")
        for key, value in properties:
            ET.SubElement(props, "property", {"name": key, "value": _xml(value)})
    failures = errors = 0
    total_time = 0.0
    for case in cases:
        seconds = _seconds(case.get("latency_ms"))
        total_time += float(seconds)
        testcase = ET.SubElement(
            suite,
            "testcase",
            {"classname": _xml(f"evalsite.{dataset}"), "name": _xml(case.get("name", "?")), "time": seconds},
        )
        if case_passed(case):
            continue
        evidence = " ".join(case_evidence(case))
        kind = ",".join(str(c) for c in case.get("failed_checks") or []) or "gate"
        if case_measured(case):
            failures += 1
            element = ET.SubElement(testcase, "failure", {"message": _xml(evidence), "type": _xml(kind)})
        else:
            errors += 1
            element = ET.SubElement(testcase, "error", {"message": _xml(evidence), "type": _xml(kind)})
        element.text = _xml(_case_report(case))
    tests = len(cases)
    if gate.get("verdict") == "FAIL" and not failures and not errors:
        blocked = "; ".join(str(b) for b in gate.get("blocked_by") or []) or "the gate said FAIL"
        testcase = ET.SubElement(
            suite, "testcase", {"classname": _xml(f"evalsite.{dataset}"), "name": "gate verdict", "time": "0.000"}
        )
        ET.SubElement(testcase, "failure", {"message": _xml(blocked), "type": "verdict"}).text = _xml(blocked)
        tests += 1
        failures += 1
    out = ET.SubElement(suite, "system-out")
    out.text = _xml(format_verdict(gate))
    counts = {"tests": str(tests), "failures": str(failures), "errors": str(errors), "skipped": "0"}
    suite.attrib.update({**counts, "time": f"{total_time:.3f}"})
    root = ET.Element("testsuites", {"name": "evalsite", **counts, "time": f"{total_time:.3f}"})
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
