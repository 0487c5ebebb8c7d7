"""The verdict as Markdown, for ``$GITHUB_STEP_SUMMARY`` and merge request notes."""

from __future__ import annotations

import re
from typing import Any

from .errors import EvalgateError
from .files import parent_ensure
from .lines import bar_move_text, case_findings, case_measured, case_passed, figures_line, gate_counts

# A step summary is capped at 1 MiB, and a person reads the first screen: list the
# failures (up to this many) and count the rest. JUnit and the log keep every case.
MARKDOWN_MAX_FAILURES = 50
# Below this many cases, the passing ones are listed too.
MARKDOWN_LIST_PASSES_UP_TO = 20


_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|&~#])")


def _md_text(value: Any) -> str:
    """Plain text for Markdown: punctuation that could become markup is escaped."""
    return _MD_SPECIAL.sub(r"\\\1", " ".join(str(value).split()))


def _md_code(value: Any) -> str:
    """A code span for a table cell: one line, ``|`` escaped (GFM splits cells first)."""
    text = " ".join(str(value).split()).replace("|", "\\|")
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _md_link(text: str, url: Any) -> str:
    """``[text](url)`` when there is a URL; a URL is percent-encoded by the server, so only ``()`` and spaces need care."""
    if not url:
        return text
    target = str(url).replace(" ", "%20").replace("(", "%28").replace(")", "%29")
    return f"[{text}]({target})"


def trial_strip(case: dict) -> str:
    """A case's trials as ✓ ✓ ✗ (– for a trial that could not be measured); empty for one trial."""
    results = case.get("trial_results") or []
    if len(results) <= 1:
        return ""
    return " ".join(
        "\u2713" if t.get("passed") else ("\u2717" if t.get("passed") is False else "\u2013") for t in results
    )


def _case_row(case: dict) -> str:
    name = _md_link(_md_code(case.get("name", "?")), case.get("run_url"))
    strip = trial_strip(case)
    trials = f" {strip}" + (" flaky" if case.get("flaky") else "") if strip else ""
    if case_passed(case):
        return f"| {name} | PASS{trials} | |"
    result = ("FAIL" if case_measured(case) else "FAIL (not measured)") + trials
    findings = "<br>".join(_md_text(item) for item in case_findings(case))
    return f"| {name} | {result} | {findings} |"


def _case_table(cases: list) -> list:
    failed = [c for c in cases if not case_passed(c)]
    shown = failed[:MARKDOWN_MAX_FAILURES]
    if len(cases) <= MARKDOWN_LIST_PASSES_UP_TO:
        shown += [c for c in cases if case_passed(c)]
    lines = []
    if shown:
        lines += ["| case | result | what failed |", "|---|---|---|"] + [_case_row(c) for c in shown]
    rest = []
    if len(failed) > MARKDOWN_MAX_FAILURES:
        rest.append(f"{len(failed) - MARKDOWN_MAX_FAILURES} more failed cases")
    passing = len(cases) - len(failed)
    if passing and len(cases) > MARKDOWN_LIST_PASSES_UP_TO:
        rest.append(f"{passing} passing cases")
    if rest:
        lines += ["", " and ".join(rest) + " are not listed here: the log and the JUnit report list every case."]
    return lines


def format_markdown(gate: dict) -> str:
    """A Markdown report for ``$GITHUB_STEP_SUMMARY``: verdict, figures, failed cases linked to their runs."""
    cases = gate.get("cases") or []
    passed, total = gate_counts(gate)
    verdict = gate.get("verdict")
    icon = "\u2705" if verdict == "PASS" else "\u274c"
    title = _md_link(f"evalsite gate: {verdict} ({passed}/{total})", gate.get("url"))
    lines = [
        f"## {icon} {title}",
        "",
        f"Dataset {_md_code(gate.get('dataset', ''))}, experiment {_md_code(gate.get('experiment', ''))}.",
        "",
        _md_text(figures_line(gate, sep=" \u00b7 ")),
        "",
    ]
    blocked = gate.get("blocked_by") or []
    if blocked:
        lines += [f"- blocked by: {_md_text(item)}" for item in blocked] + [""]
    moved = [m for m in gate.get("bar_moved") or [] if isinstance(m, dict)]
    if moved:
        lines += ["**Bar moved since baseline:**", ""] + [f"- {_md_text(bar_move_text(m))}" for m in moved]
        if gate.get("bar_moved_more"):
            lines.append(f"- and {_md_text(gate['bar_moved_more'])} more")
        lines.append("")
    notes = [f"- advisory: {_md_text(item)}" for item in gate.get("advisory") or []]
    notes += [
        f"- quarantined (not counted): {_md_code(c.get('name', '?'))} {'PASS' if case_passed(c) else 'FAIL'}"
        for c in gate.get("quarantined") or []
    ]
    if notes:
        lines += [*notes, ""]
    lines += _case_table(cases)
    if gate.get("url"):
        lines += ["", f"{_md_link('The gate run', gate['url'])} has every case, check and run."]
    elif gate.get("gate_run_id") is not None:
        lines += ["", f"Gate run {_md_text(gate['gate_run_id'])}."]
    return "\n".join(lines) + "\n\n"


def undecided_markdown(dataset: str, experiment: str, error: EvalgateError) -> str:
    body = "\n".join([error.message, *error.details])
    fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", body)), default=0))
    return (
        f"## \u26a0\ufe0f evalsite gate: could not decide\n\n"
        f"Dataset {_md_code(dataset)}, experiment {_md_code(experiment)}.\n\n"
        f"{fence}text\n{body}\n{fence}\n\n"
    )


def append_markdown(text: str, path: str) -> None:
    parent_ensure(path)
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(text)
