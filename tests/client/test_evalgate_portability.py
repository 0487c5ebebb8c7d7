"""client/evalgate.py is one file CI copies alone: stdlib only, Python 3.9 syntax and runtime."""

import ast
import glob
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[2] / "client" / "evalgate.py"

# Exercises the rendering and the Tracer, the parts with no server, on another interpreter.
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


def test_it_parses_as_python_3_9():
    ast.parse(SOURCE.read_text("utf-8"), feature_version=(3, 9))


def test_it_imports_only_the_standard_library():
    tree = ast.parse(SOURCE.read_text("utf-8"))
    modules = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "a relative import would break the file copied alone"
            modules.add(node.module.split(".")[0])

    assert modules, "the walk found no import at all"
    assert sorted(modules - set(sys.stdlib_module_names)) == []


def test_it_runs_as_a_file_copied_alone(tmp_path):
    copy = tmp_path / "evalgate.py"
    shutil.copy(SOURCE, copy)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "DJANGO_SETTINGS_MODULE")}

    version = subprocess.run(
        [sys.executable, str(copy), "--version"], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=60
    )
    no_server = subprocess.run(
        [sys.executable, str(copy), "gate", "--dataset", "d", "--experiment", "e"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={k: v for k, v in env.items() if not k.startswith("EVALSITE_")},
        timeout=60,
    )

    assert (version.returncode, version.stdout) == (0, "evalgate 1.0.0\n")
    assert no_server.returncode == 2
    assert "pass --url or set EVALSITE_URL" in no_server.stderr


def test_it_runs_on_python_3_9(tmp_path):
    interpreter = python39()
    if interpreter is None:
        pytest.skip("no Python 3.9 interpreter on this machine")
    shutil.copy(SOURCE, tmp_path / "evalgate.py")

    result = subprocess.run(
        [interpreter, "-W", "error", "-c", SMOKE, str(tmp_path / "junit.xml")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
    )

    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "  quote_focus_pro_3h                     FAIL  -- tool_choice_ok=False actual_tools=['book_room']",
        '"2026-11-30T10:00:00.005Z"',
        "evalgate 1.0.0",
        "0",
    ]
