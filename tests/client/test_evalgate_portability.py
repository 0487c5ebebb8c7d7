"""The evalgate package runs anywhere CI has Python 3.9+: stdlib only, 3.9 syntax and runtime."""

import ast
import glob
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

CLIENT = Path(__file__).resolve().parents[2] / "client"
PACKAGE = CLIENT / "evalgate"
LAUNCHER = CLIENT / "evalgate.py"
MODULES = sorted(PACKAGE.glob("*.py"))
# pytest loads the plugin, so pytest is there whenever it runs; nothing else may import it.
ALSO_ALLOWED = {"pytest_plugin.py": {"pytest"}}

# Exercises the rendering, the seed's report and the Tracer, the parts with no server.
SMOKE = r"""
import json, sys
import evalgate

case = {"name": "quote_focus_pro_3h", "trace_id": "t", "passed": False, "measured": True,
        "actual_tools": ["book_room"], "tool_choice_ok": False, "schema_errors": [], "output_errors": [],
        "cost_ok": True, "latency_ok": True, "latency_ms": 1450, "checks": [], "reasons": ["tool_choice: x"]}
gate = {"dataset": "reservo", "experiment": "v2", "verdict": "FAIL", "passed_cases": 0, "total_cases": 1,
        "pass_rate": 0.0, "floor": 1.0, "baseline": None, "cases": [case]}
print(evalgate.format_verdict(gate).splitlines()[1])
evalgate.write_junit(evalgate.junit_xml(gate), sys.argv[1])
evalgate.format_markdown(gate)
report = evalgate.GateReport.from_gate(gate)
print(report.lines()[0], report.summarize_failures())
tracer = evalgate.Tracer(experiment="v2")
with tracer.run("r", started_at="2026-11-30T10:00:00Z", latency_ms=5) as run:
    with run.span("tool", "quote_room") as span:
        span.output = {"total_cents": 7500}
    run.output = "ok"
print(json.dumps(tracer.runs[0]["ended_at"]))
print(evalgate.main(["--version"]))
"""


def python39():
    """A Python 3.9 interpreter if this machine has one (on PATH or under pyenv)."""
    candidates = [
        shutil.which("python3.9"),
        *sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.9*/bin/python3.9"))),
    ]
    for candidate in filter(None, candidates):
        try:
            result = subprocess.run(
                [candidate, "-c", "import sys; print(sys.version_info[:2] == (3, 9))"],
                capture_output=True,
                text=True,
                timeout=30,
            )
        except OSError:
            continue
        if result.stdout.strip() == "True":
            return candidate
    return None


def imported_modules(path):
    """Top-level modules ``path`` imports; relative imports (within the package) are left out."""
    modules = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            modules.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            modules.add(node.module.split(".")[0])
    return modules


def clean_env():
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "DJANGO_SETTINGS_MODULE")}


def test_the_package_is_split_into_modules():
    assert len(MODULES) >= 8
    assert all(path.read_text("utf-8").count("\n") <= 500 for path in MODULES)


@pytest.mark.parametrize("path", [*MODULES, LAUNCHER], ids=lambda p: p.name)
def test_it_parses_as_python_3_9(path):
    ast.parse(path.read_text("utf-8"), feature_version=(3, 9))


@pytest.mark.parametrize("path", [*MODULES, LAUNCHER], ids=lambda p: p.name)
def test_it_imports_only_the_standard_library(path):
    allowed = set(sys.stdlib_module_names) | {"evalgate"} | ALSO_ALLOWED.get(path.name, set())

    assert sorted(imported_modules(path) - allowed) == []


def test_the_import_check_sees_a_third_party_import(tmp_path):
    module = tmp_path / "x.py"
    module.write_text("from __future__ import annotations\nimport requests\nfrom .http import Client\n")

    assert imported_modules(module) == {"__future__", "requests"}


def test_the_launcher_runs_the_package_beside_it_from_a_checkout(tmp_path):
    # An interpreter that does not have the package installed: the launcher alone must find it.
    interpreter = python39() or sys.executable
    env = {k: v for k, v in clean_env().items() if not k.startswith("EVALSITE_")}
    version = subprocess.run(
        [interpreter, str(LAUNCHER), "--version"], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=60
    )
    no_server = subprocess.run(
        [interpreter, str(LAUNCHER), "gate", "--dataset", "d", "--experiment", "e"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=60,
    )

    assert (version.returncode, version.stdout) == (0, "evalgate 1.0.0\n"), version.stderr
    assert no_server.returncode == 2
    assert "pass --url or set EVALSITE_URL" in no_server.stderr


def test_it_runs_on_python_3_9(tmp_path):
    interpreter = python39()
    if interpreter is None:
        pytest.skip("no Python 3.9 interpreter on this machine")
    shutil.copytree(PACKAGE, tmp_path / "evalgate", ignore=shutil.ignore_patterns("__pycache__"))

    result = subprocess.run(
        [interpreter, "-W", "error", "-c", SMOKE, str(tmp_path / "junit.xml")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=clean_env(),
        timeout=60,
    )

    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "  quote_focus_pro_3h                     FAIL  -- tool_choice_ok=False actual_tools=['book_room']",
        "GATE: FAIL (0/1) {'quote_focus_pro_3h': ['tool_choice']}",
        '"2026-11-30T10:00:00.005Z"',
        "evalgate 1.0.0",
        "0",
    ]
