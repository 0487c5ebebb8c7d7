"""The verdict as Markdown, for ``$GITHUB_STEP_SUMMARY`` and merge request notes."""

from __future__ import annotations

import re
from typing import Any

from .errors import EvalgateError
from .files import parent_ensure
from .lines import case_evidence, case_measured, case_passed, figures_line, gate_counts

MARKDOWN_MAX_ROWS = 500  # a step summary is capped at 1 MiB; JUnit and the log keep every case
MARKDOWN_MAX_FAILURES = 100


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


def format_markdown(gate: dict) -> str:
    """A Markdown report for ``$GITHUB_STEP_SUMMARY``: verdict, figures, cases (failures first), reasons."""
    cases = gate.get("cases") or []
    passed, total = gate_counts(gate)
    verdict = gate.get("verdict")
    icon = "\u2705" if verdict == "PASS" else "\u274c"
    lines = [
        f"## {icon} evalsite gate: {verdict} ({passed}/{total})",
        "",
        f"Dataset {_md_code(gate.get('dataset', ''))}, experiment {_md_code(gate.get('experiment', ''))}.",
        "",
        _md_text(figures_line(gate, sep=" \u00b7 ")),
        "",
    ]
    blocked = gate.get("blocked_by") or []
    if blocked:
        lines += [f"- blocked by: {_md_text(item)}" for item in blocked] + [""]
    ordered = [c for c in cases if not case_passed(c)] + [c for c in cases if case_passed(c)]
    lines += ["| case | result | evidence |", "|---|---|---|"]
    for case in ordered[:MARKDOWN_MAX_ROWS]:
        if case_passed(case):
            result, evidence = "PASS", ""
        else:
            result = "FAIL" if case_measured(case) else "FAIL (not measured)"
            evidence = _md_code(" ".join(case_evidence(case)))
        lines.append(f"| {_md_code(case.get('name', '?'))} | {result} | {evidence} |")
    if len(ordered) > MARKDOWN_MAX_ROWS:
        lines.append(
            f"\n{len(ordered) - MARKDOWN_MAX_ROWS} more cases are not shown; the log and JUnit report list all."
        )
    failed = [c for c in cases if not case_passed(c)]
    if failed:
        lines += ["", "### Failures", ""]
        for case in failed[:MARKDOWN_MAX_FAILURES]:
            lines.append(f"- **{_md_text(case.get('name', '?'))}**")
            lines += [f"  - {_md_text(reason)}" for reason in case.get("reasons") or ["(the server gave no reason)"]]
        if len(failed) > MARKDOWN_MAX_FAILURES:
            lines.append(f"\n{len(failed) - MARKDOWN_MAX_FAILURES} more failed cases are listed in the log.")
    if gate.get("gate_run_id") is not None:
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
