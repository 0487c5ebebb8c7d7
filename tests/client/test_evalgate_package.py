"""The package as users get it: ``pip install ./client`` into a fresh virtualenv, then the
``evalgate`` command against a live server."""

import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import xmlschema

import evalgate
from examples.reservo import GOLDEN_CASES_PATH, load_golden_cases, load_script
from examples.reservo.tracing import case_trace
from tests.live import ROOT

SCHEMAS = Path(__file__).resolve().parent / "schemas"
SEED_FAIL = [
    "GATE: FAIL (4/5)",
    "  quote_focus_pro_3h                     FAIL  -- tool_choice_ok=False actual_tools=['book_room']",
    "  quote_focus_basic_3h                   PASS",
    "  book_focus_pro_3h_ana                  PASS",
    "  book_boardroom_pro_1h_sofia            PASS",
    "  book_and_cancel_studio_basic_1h_diego  PASS",
]


def plain_env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "DJANGO_SETTINGS_MODULE")}
    env = {k: v for k, v in env.items() if not k.startswith("EVALSITE_")}
    return {**env, **extra}


@pytest.fixture(scope="module")
def venv(tmp_path_factory):
    """A fresh virtualenv with the package installed from a copy of client/ (as ``pip install ./client``)."""
    folder = tmp_path_factory.mktemp("package")
    source = folder / "client"
    shutil.copytree(ROOT / "client", source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    subprocess.run([sys.executable, "-m", "venv", str(folder / "venv")], check=True, timeout=120)
    bin_dir = folder / "venv" / "bin"
    result = subprocess.run(
        [bin_dir / "pip", "install", "--quiet", "--disable-pip-version-check", str(source)],
        capture_output=True, text=True, env=plain_env(), timeout=600,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    return bin_dir


def run(venv, *args, cwd, env):
    return subprocess.run([venv / args[0], *args[1:]], capture_output=True, text=True, cwd=cwd, env=env, timeout=300)


def test_it_installs_the_command_the_plugin_and_nothing_else(venv, tmp_path):
    version = run(venv, "evalgate", "--version", cwd=tmp_path, env=plain_env())
    where = run(
        venv, "python", "-c",
        "import evalgate, importlib.metadata as m; print(evalgate.__file__);"
        "print([e.value for e in m.entry_points(group='pytest11') if e.name == 'evalgate']);"
        "print(sorted(d.metadata['Name'] for d in m.distributions()))",
        cwd=tmp_path, env=plain_env(),
    )  # fmt: skip

    assert (version.returncode, version.stdout) == (0, "evalgate 1.0.0\n")
    location, plugin, distributions = where.stdout.splitlines()
    assert location.startswith(str(venv.parent / "lib"))  # the installed copy, not the checkout
    assert plugin == "['evalgate.pytest_plugin']"
    assert "'evalgate'" in distributions and "pytest" not in distributions  # no dependencies


def test_the_installed_command_gates_against_a_live_server(venv, server, tmp_path):
    url, key = server
    env = plain_env(EVALSITE_URL=url, EVALSITE_API_KEY=key)
    tracer = evalgate.Tracer(experiment="v2", dataset="reservo")
    regression = load_script("quote_books_instead")
    for case in load_golden_cases():
        script = regression if case["name"] == "quote_focus_pro_3h" else None
        case_trace(tracer, case, script=script, trace_id=f"v2-{case['name']}")
    tracer.write_jsonl(tmp_path / "runs.jsonl")

    imported = run(venv, "evalgate", "import", "--dataset", "reservo", str(GOLDEN_CASES_PATH), cwd=tmp_path, env=env)
    uploaded = run(venv, "evalgate", "upload", "--experiment", "v2", "runs.jsonl", cwd=tmp_path, env=env)
    gate = run(
        venv, "evalgate", "gate", "--dataset", "reservo", "--experiment", "v2", "--junit", "reports/junit.xml",
        "--summary", "summary.md", cwd=tmp_path, env=env,
    )  # fmt: skip

    assert imported.returncode == 0, imported.stderr
    assert uploaded.stdout == "uploaded 5 runs (5 created, 0 unchanged)\n"
    assert gate.returncode == 1, gate.stderr
    lines = gate.stdout.splitlines()
    assert lines[:6] == SEED_FAIL
    gate_run_line = next(line for line in lines if line.startswith("gate run: "))
    gate_run_id = gate_run_line.split()[2]
    assert gate_run_line == f"gate run: {gate_run_id}  {url}/p/client-e2e/gate-runs/{gate_run_id}/"
    xmlschema.XMLSchema(SCHEMAS / "junit-10.xsd").validate(str(tmp_path / "reports" / "junit.xml"))
    failure = ET.parse(tmp_path / "reports" / "junit.xml").find(".//testcase[@name='quote_focus_pro_3h']/failure")
    _, answer = evalgate.Client(url, key).request("GET", f"{url}/v1/api/gate-runs/{gate_run_id}")
    failed_checks = next(c["failed_checks"] for c in answer["cases"] if c["name"] == "quote_focus_pro_3h")
    assert failed_checks[0] == "tool_choice" and failure.get("type") == ",".join(failed_checks)
    summary = (tmp_path / "summary.md").read_text("utf-8")
    assert f"({url}/p/client-e2e/runs/v2-quote_focus_pro_3h/)" in summary


def test_the_installed_command_says_it_could_not_decide_without_a_server(venv, tmp_path):
    result = run(
        venv, "evalgate", "gate", "--dataset", "reservo", "--experiment", "v2", "--url", "http://127.0.0.1:9",
        "--key", "esk_x", cwd=tmp_path, env=plain_env(),
    )  # fmt: skip

    assert result.returncode == 2
    assert result.stderr.startswith("evalgate: could not decide: could not reach http://127.0.0.1:9/v1/api/gate")
