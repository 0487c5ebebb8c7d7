"""A gate with more cases than its answer carries, through ``evalgate gate`` against live servers.

One server answers with every case (the default page of 100); another carries two cases
in the answer and serves the rest by ``cases_next``. The command follows the cursor, so
its lines, JUnit and Markdown name every case, and it exits the same way on both.
"""

import xml.etree.ElementTree as ET

import pytest

import evalgate
from evalsite.projects import api_key_create, project_create
from evalsite.scopes import ADMIN
from examples.reservo import GOLDEN_CASES_PATH, load_golden_cases, load_script
from examples.reservo.tracing import case_trace
from tests.live import web_server

NAMES = [case["name"] for case in load_golden_cases()]
FAILING = {"quote_focus_pro_3h", "book_boardroom_pro_1h_sofia"}


@pytest.fixture(scope="module")
def paged_url(django_db_setup):
    with web_server(workers=1, env={"EVALSITE_GATE_ANSWER_CASES": "2"}) as url:
        yield url


@pytest.fixture
def runs(live_url, transactional_db, tmp_path):
    """A key of a fresh project with Reservo imported and experiment v2 uploaded (two cases regressed)."""
    project = project_create(slug="paged", name="Paged")
    _, key = api_key_create(project=project, name="ci", scopes=[ADMIN])
    client = evalgate.Client(live_url, key)
    evalgate.cases_import(client, "reservo", GOLDEN_CASES_PATH.read_bytes())
    tracer = evalgate.Tracer(experiment="v2", dataset="reservo")
    regression = load_script("quote_books_instead")
    for case in load_golden_cases():
        case_trace(tracer, case, script=regression if case["name"] in FAILING else None, trace_id=f"v2-{case['name']}")
    tracer.write_jsonl(tmp_path / "runs.jsonl")
    with open(tmp_path / "runs.jsonl", "rb") as fh:
        evalgate.upload_runs(client, evalgate.read_runs(fh)[0])
    return key


def _gate(url, key, folder, capsys):
    folder.mkdir()
    code = evalgate.main([
        "--url", url, "--key", key, "gate", "--dataset", "reservo", "--experiment", "v2",
        "--junit", str(folder / "junit.xml"), "--summary", str(folder / "summary.md"),
    ])  # fmt: skip
    return code, capsys.readouterr().out, ET.parse(folder / "junit.xml"), (folder / "summary.md").read_text("utf-8")


def test_the_command_follows_the_cases_cursor_to_every_case(live_url, paged_url, runs, tmp_path, capsys):
    whole = _gate(live_url, runs, tmp_path / "whole", capsys)
    paged = _gate(paged_url, runs, tmp_path / "paged", capsys)

    _, answer = evalgate.Client(paged_url, runs).request(
        "POST", f"{paged_url}/v1/api/gate", {"dataset": "reservo", "experiment": "v2"}
    )
    assert len(answer["cases"]) == 2 and answer["cases_next"], "the paged server carries two cases"
    assert {c["name"] for c in answer["cases"]} == FAILING, "the failing cases are chosen first"
    for code, out, junit, summary in (whole, paged):
        assert code == 1
        assert out.startswith("GATE: FAIL (3/5)")
        testcases = junit.findall(".//testcase")
        assert sorted(t.get("name") for t in testcases) == sorted(NAMES)
        assert sorted(t.get("name") for t in testcases if t.find("failure") is not None) == sorted(FAILING)
        for name in NAMES:
            assert f"  {name}" in out, name
            assert name in summary, name
    assert sorted(whole[1].splitlines()[1:6]) == sorted(paged[1].splitlines()[1:6])
