"""The pytest plugin, run as CI runs it: pytest in a subprocess producing JUnit, against a live server.

Each golden case becomes a test whose failure message is the case's reasons, and a
``gate verdict`` test fails with the reasons the gate blocked; the ``evalgate`` fixture
and ``assert_case`` serve tests people write themselves.
"""

import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

import evalgate
from examples.reservo import load_golden_cases, load_script
from examples.reservo.tracing import case_trace

# pytester, pytest's own harness for testing a plugin (runs pytest in a fresh folder).
pytest_plugins = ["pytester"]

CASES = [case["name"] for case in load_golden_cases()]
OWN_TEST = """
from evalgate import assert_case


def test_the_quote_case_as_my_own_test(evalgate):
    assert_case(evalgate.gate().case("quote_focus_pro_3h"))
"""


def upload(client, experiment, overrides=None):
    tracer = evalgate.Tracer(experiment=experiment, dataset="reservo")
    for case in load_golden_cases():
        case_trace(tracer, case, script=(overrides or {}).get(case["name"]), trace_id=f"{experiment}-{case['name']}")
    evalgate.upload_runs(client, tracer.runs)


def pytest_run(folder, server, *args):
    url, key = server
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "DJANGO_SETTINGS_MODULE")}
    env.update(EVALSITE_URL=url, EVALSITE_API_KEY=key)
    (folder / "pytest.ini").write_text("[pytest]\n")
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:django", "--junitxml", "junit.xml",
         *args],
        cwd=folder, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def junit_cases(folder):
    return {case.get("name"): case for case in ET.parse(folder / "junit.xml").iter("testcase")}


@pytest.fixture
def regressed(reservo):
    upload(reservo, "v2", {"quote_focus_pro_3h": load_script("quote_books_instead")})
    return reservo


def test_each_golden_case_is_a_test_whose_failure_message_is_its_reasons(server, regressed, tmp_path):
    result = pytest_run(tmp_path, server, "--evalgate-dataset", "reservo", "--evalgate-experiment", "v2")

    assert result.returncode == 1, result.stdout + result.stderr
    cases = junit_cases(tmp_path)
    assert list(cases) == [*CASES, "gate verdict"]
    assert {case.get("classname") for case in cases.values()} == {"evalgate.reservo"}
    answer = evalgate.request_gate(regressed, dataset="reservo", experiment="v2")
    reasons = next(c["reasons"] for c in answer["cases"] if c["name"] == "quote_focus_pro_3h")
    assert reasons[0] == "tool_choice: expected ['quote_room'], called ['book_room']"
    assert cases["quote_focus_pro_3h"].find("failure").get("message") == "\n".join(reasons)
    assert all(cases[name].find("failure") is None for name in CASES[1:])
    assert cases["gate verdict"].find("failure").get("message") == "pass rate 0.800 is below the floor 1.000"
    assert "2 failed, 4 passed" in result.stdout


def test_a_clean_experiment_passes_every_test(server, reservo, tmp_path):
    upload(reservo, "v1")

    result = pytest_run(tmp_path, server, "--evalgate-dataset", "reservo", "--evalgate-experiment", "v1")

    assert result.returncode == 0, result.stdout + result.stderr
    assert all(case.find("failure") is None for case in junit_cases(tmp_path).values())
    assert "6 passed" in result.stdout


def test_the_fixture_and_assert_case_fail_a_test_of_ones_own_with_the_evidence(server, regressed, tmp_path):
    (tmp_path / "test_own.py").write_text(OWN_TEST)

    result = pytest_run(tmp_path, server, "--evalgate-dataset", "reservo", "--evalgate-experiment", "v2", "test_own.py")

    own = junit_cases(tmp_path)["test_the_quote_case_as_my_own_test"]
    message = own.find("failure").get("message")
    assert result.returncode == 1
    assert "quote_focus_pro_3h                     FAIL  -- tool_choice_ok=False actual_tools=['book_room']" in message
    assert "/p/client-e2e/runs/v2-quote_focus_pro_3h/" in own.find("failure").text


def test_without_its_options_the_plugin_adds_nothing(server, tmp_path):
    (tmp_path / "test_plain.py").write_text("def test_plain():\n    assert True\n")

    result = pytest_run(tmp_path, server)

    assert result.returncode == 0, result.stdout + result.stderr
    assert list(junit_cases(tmp_path)) == ["test_plain"]


def test_an_unknown_dataset_stops_pytest_with_a_usage_error(server, tmp_path):
    result = pytest_run(tmp_path, server, "--evalgate-dataset", "nope", "--evalgate-experiment", "v1")

    assert result.returncode == 4
    assert "evalgate: cannot read the cases of dataset nope" in result.stderr


# ----------------------------------------------- counted and skipped as pytest reports them


@pytest.fixture
def plain_pytester(pytester, server, monkeypatch):
    """pytester in a subprocess as CI runs it: the live server in the environment, no Django."""
    url, key = server
    monkeypatch.delenv("PYTHONPATH", raising=False)
    monkeypatch.delenv("DJANGO_SETTINGS_MODULE", raising=False)
    monkeypatch.setenv("EVALSITE_URL", url)
    monkeypatch.setenv("EVALSITE_API_KEY", key)
    pytester.makeini("[pytest]\n")
    return pytester


def gate_pytest(pytester, experiment, *args):
    return pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-p", "no:django", "-rs",
        "--evalgate-dataset", "reservo", "--evalgate-experiment", experiment, *args,
    )  # fmt: skip


def quarantine(client, name, reason):
    (case,) = [c for c in evalgate.fetch_cases(client, "reservo") if c["name"] == name]
    body = {"quarantined": True, "quarantine_reason": reason}
    client.request("PATCH", client.url(f"cases/{case['id']}"), body)


def test_it_collects_one_item_per_case_and_the_verdict(plain_pytester, reservo):
    upload(reservo, "v1")
    plain_pytester.makepyfile(test_own="def test_mine():\n    assert True\n")

    result = gate_pytest(plain_pytester, "v1")

    result.stdout.fnmatch_lines([f"collected {len(CASES) + 2} items"])
    result.assert_outcomes(passed=len(CASES) + 2)


def test_it_selects_among_the_cases_with_k(plain_pytester, reservo):
    upload(reservo, "v1")

    result = gate_pytest(plain_pytester, "v1", "-k", "quote_focus")

    result.stdout.fnmatch_lines([f"collected {len(CASES) + 1} items / {len(CASES) - 1} deselected / 2 selected"])
    result.assert_outcomes(passed=2, deselected=len(CASES) - 1)


def test_it_skips_a_quarantined_case_with_its_reason(plain_pytester, regressed):
    quarantine(regressed, "quote_focus_pro_3h", "the quote tool is being replaced")

    result = gate_pytest(plain_pytester, "v2", "--junitxml", "junit.xml")

    assert result.ret == 0
    result.assert_outcomes(passed=len(CASES), skipped=1)
    result.stdout.fnmatch_lines(
        ["SKIPPED * quarantined: the quote tool is being replaced (the gate judged it FAIL, not counted)"]
    )
    skipped = junit_cases(plain_pytester.path)["quote_focus_pro_3h"].find("skipped")
    assert skipped.get("message").startswith("quarantined: the quote tool is being replaced")
