"""evalgate rides out a busy server: 429/502/503/504 retried where repeating is safe, and
a reader that leaves early (``| head``) ends the command quietly.

Against the same scripted loopback server as the protocol tests.
"""

import json
import subprocess
import sys
import time

import pytest

import evalgate
from tests.client import test_evalgate_protocol as protocol
from tests.client.test_evalgate_protocol import KEY, created, gate, problem, run, write_runs
from tests.client.test_evalgate_report import pass_answer

server = protocol.server  # the scripted loopback server, not conftest's live evalsite

BUSY = problem(503, "The database is busy; try again shortly.")[1]


def test_it_retries_the_gate_after_a_503_with_retry_after(server, capsys):
    server.on("POST", "/v1/api/gate", (503, BUSY, {"Retry-After": "1"}), pass_answer())

    started = time.monotonic()
    code = gate(server)

    assert code == 0
    assert time.monotonic() - started >= 1.0
    first, second = server.bodies("POST", "/v1/api/gate")
    assert first == second
    assert capsys.readouterr().out.startswith("GATE: PASS")


def test_it_retries_an_upload_batch_answered_502_then_504(server, tmp_path, capsys):
    server.on(
        "POST",
        "/v1/api/traces",
        (502, b"<html>Bad Gateway</html>", {"Retry-After": "0"}),
        (504, b"<html>Gateway Timeout</html>", {"Retry-After": "0"}),
        created(1),
    )

    code = run(server, "upload", write_runs(tmp_path / "runs.jsonl", [{"trace_id": "a"}]))

    assert code == 0
    assert len(server.bodies("POST", "/v1/api/traces")) == 3
    assert capsys.readouterr().out == "uploaded 1 runs (1 created, 0 unchanged)\n"


def test_it_retries_reading_cases_answered_503(server, capsys):
    base = "/v1/api/datasets/reservo/cases"
    server.on("GET", base, (503, BUSY, {"Retry-After": "0"}), {"next": None, "results": [{"id": 1}]})

    code = run(server, "cases", "--dataset", "reservo")

    assert code == 0
    assert capsys.readouterr().out == '{"id": 1}\n'


def test_it_does_not_repeat_creating_a_dataset_answered_502(server, tmp_path, capsys):
    # The proxy may have answered 502 after the server created it: a repeat would be a 409.
    server.on("GET", "/v1/api/datasets/reservo", problem(404, "No dataset."))
    server.on("POST", "/v1/api/datasets", (502, b"<html>Bad Gateway</html>", {"Retry-After": "0"}))
    cases = tmp_path / "cases.jsonl"
    cases.write_text('{"name": "a", "input": "x"}\n', "utf-8")

    code = run(server, "import", "--dataset", "reservo", str(cases))

    assert code == 2
    assert len(server.bodies("POST", "/v1/api/datasets")) == 1
    assert "502 Bad Gateway" in capsys.readouterr().err


def test_it_stops_after_the_policys_number_of_retries(server):
    server.on("POST", "/v1/api/gate", (503, BUSY, {"Retry-After": "0"}))
    client = evalgate.Client(server.url, KEY, retry=evalgate.RetryPolicy(retries=2))

    with pytest.raises(evalgate.ApiError) as caught:
        evalgate.request_gate(client, dataset="reservo", experiment="v2")

    assert caught.value.status == 503
    assert len(server.requests) == 3
    assert "asked 3 times (at most 2 retries)" in caught.value.details


def test_it_gives_up_when_a_503s_retry_after_would_pass_max_wait(server, capsys):
    server.on("POST", "/v1/api/gate", (503, BUSY, {"Retry-After": "120"}))

    started = time.monotonic()
    code = gate(server, "--max-wait", "5")

    assert code == 2
    assert time.monotonic() - started < 5
    assert len(server.requests) == 1
    err = capsys.readouterr().err
    assert "answered 503 Service Unavailable" in err
    assert "--max-wait 5s" in err


def test_it_ends_quietly_when_the_reader_of_its_output_leaves(server):
    many = [{"id": i, "input": "x" * 200} for i in range(2000)]  # well over a pipe's buffer
    server.on("GET", "/v1/api/datasets/reservo/cases", {"next": None, "results": many})

    cli = subprocess.Popen(
        [sys.executable, "-m", "evalgate", "cases", "--dataset", "reservo", "--url", server.url, "--key", KEY],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    first = cli.stdout.readline()  # what `| head -1` reads before it closes the pipe
    cli.stdout.close()
    stderr = cli.stderr.read()
    code = cli.wait(timeout=30)

    assert json.loads(first)["id"] == 0
    assert stderr == b""
    assert code == evalgate.errors.EXIT_BROKEN_PIPE


def test_it_keeps_the_gates_exit_code_and_reports_when_the_reader_leaves(server, tmp_path):
    server.on("POST", "/v1/api/gate", pass_answer())
    junit = tmp_path / "junit.xml"
    command = [sys.executable, "-m", "evalgate", "gate", "--dataset", "reservo", "--experiment", "v2"]
    command += ["--junit", str(junit), "--url", server.url, "--key", KEY]

    cli = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    cli.stdout.close()  # `| true`: nobody reads the verdict's lines
    stderr = cli.stderr.read()
    code = cli.wait(timeout=30)

    assert stderr == b""
    assert code == 0
    assert junit.exists()
