"""evalgate's HTTP protocol against a real local server that plays scripted answers.

The server is stdlib ``ThreadingHTTPServer`` on a loopback port; it records every
request so a test can check paths, headers and bodies, not only exit codes. End to end
tests against evalsite itself live elsewhere.
"""

import io
import json
import socket
import threading
import time
import xml.etree.ElementTree as ET
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

import evalgate
from tests.client.test_evalgate_report import gate_answer, pass_answer

KEY = "es_test_0123456789"


class Scripted:
    """Answers per ``(method, path?query)``: each request takes the next scripted answer,
    and the last one repeats. An answer is ``(status, body, headers)``; a dict or list
    body is sent as JSON (problem+json from 400 up), bytes as they are."""

    def __init__(self, url):
        self.url = url
        self.routes = {}
        self.requests = []
        self.lock = threading.Lock()

    def on(self, method, path, *answers):
        self.routes[(method, path)] = [a if isinstance(a, tuple) else (200, a, {}) for a in answers]

    def answer(self, handler):
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length) if length else b""
        with self.lock:
            self.requests.append(
                {
                    "method": handler.command,
                    "path": handler.path,
                    "headers": dict(handler.headers),
                    "body": json.loads(raw) if raw else None,
                }
            )
            queue = self.routes.get((handler.command, handler.path))
            if not queue:
                status, body, headers = 404, {"title": "Not Found", "status": 404, "detail": "no such route"}, {}
            else:
                status, body, headers = queue.pop(0) if len(queue) > 1 else queue[0]
        if callable(body):
            body = body()
        if isinstance(body, (dict, list)):
            payload = json.dumps(body).encode()
            kind = "application/problem+json" if status >= 400 else "application/json"
        else:
            payload, kind = body, "text/html"
        handler.send_response(status)
        handler.send_header("Content-Type", kind)
        handler.send_header("Content-Length", str(len(payload)))
        for name, value in headers.items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.write(payload)

    def bodies(self, method, path):
        return [r["body"] for r in self.requests if r["method"] == method and r["path"] == path]


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        self.server.scripted.answer(self)

    def do_POST(self):
        self.server.scripted.answer(self)

    def log_message(self, *args):
        pass


@pytest.fixture
def server(monkeypatch):
    # A CI proxy must not intercept loopback requests; the environment must not leak in.
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("EVALSITE_URL", raising=False)
    monkeypatch.delenv("EVALSITE_API_KEY", raising=False)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    httpd.scripted = Scripted(f"http://127.0.0.1:{httpd.server_address[1]}")
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    yield httpd.scripted
    httpd.shutdown()
    httpd.server_close()


def run(server, *args):
    return evalgate.main([*args, "--url", server.url, "--key", KEY])


def closed_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def problem(status, detail, errors=None):
    body = {"type": "https://evalsite.dev/problems/x", "title": "Problem", "status": status, "detail": detail}
    if errors is not None:
        body["errors"] = errors
    return (status, body, {})


# ------------------------------------------------------------------------- cases


def test_it_follows_next_across_pages_and_writes_one_case_per_line(server, tmp_path):
    base = "/v1/api/datasets/reservo/cases"
    server.on("GET", base, {"next": f"{server.url}{base}?page=2", "previous": None, "results": [{"id": 1}]})
    server.on(
        "GET",
        f"{base}?page=2",
        {"next": f"{server.url}{base}?page=3", "previous": "...", "results": [{"id": 2}, {"id": 3}]},
    )
    server.on("GET", f"{base}?page=3", {"next": None, "previous": "...", "results": [{"id": 4, "name": "café"}]})
    output = tmp_path / "out" / "cases.jsonl"

    code = run(server, "cases", "--dataset", "reservo", "--output", str(output))

    assert code == 0
    assert [json.loads(line) for line in output.read_text("utf-8").splitlines()] == [
        {"id": 1},
        {"id": 2},
        {"id": 3},
        {"id": 4, "name": "café"},
    ]
    assert [r["path"] for r in server.requests] == [base, f"{base}?page=2", f"{base}?page=3"]
    headers = server.requests[0]["headers"]
    assert headers["Authorization"] == f"Bearer {KEY}"
    assert headers["User-Agent"] == f"evalgate/{evalgate.__version__}"


def test_it_writes_cases_to_stdout_and_reads_url_and_key_from_the_environment(server, monkeypatch, capsys):
    server.on("GET", "/v1/api/datasets/my%20set/cases", {"next": None, "results": [{"id": 7, "name": "a"}]})
    monkeypatch.setenv("EVALSITE_URL", server.url + "/")
    monkeypatch.setenv("EVALSITE_API_KEY", KEY)

    code = evalgate.main(["cases", "--dataset", "my set"])

    assert code == 0
    assert capsys.readouterr().out == '{"id": 7, "name": "a"}\n'
    assert server.requests[0]["headers"]["Authorization"] == f"Bearer {KEY}"


def test_it_keeps_pagination_links_on_the_configured_server(server, tmp_path):
    base = "/v1/api/datasets/reservo/cases"
    # Behind a proxy the server may build links with its internal address.
    server.on("GET", base, {"next": f"http://internal.invalid:8000{base}?page=2", "results": [{"id": 1}]})
    server.on("GET", f"{base}?page=2", {"next": None, "results": [{"id": 2}]})

    code = run(server, "cases", "--dataset", "reservo", "--output", str(tmp_path / "c.jsonl"))

    assert code == 0
    assert [r["path"] for r in server.requests] == [base, f"{base}?page=2"]


def test_it_exits_2_for_an_unknown_dataset_and_leaves_no_output_file(server, tmp_path, capsys):
    server.on("GET", "/v1/api/datasets/nope/cases", problem(404, 'No dataset "nope".'))
    output = tmp_path / "cases.jsonl"

    code = run(server, "cases", "--dataset", "nope", "--output", str(output))

    assert code == 2
    assert 'No dataset "nope".' in capsys.readouterr().err
    assert not output.exists()


# ------------------------------------------------------------------------ upload


def write_runs(path, runs):
    path.write_text("".join(json.dumps(r) + "\n" for r in runs), "utf-8")
    return str(path)


def created(n, unchanged=0):
    return (201, {"created": n, "unchanged": unchanged, "traces": []}, {})


def test_it_uploads_in_batches_of_at_most_500_and_sets_the_missing_experiment(server, tmp_path, capsys):
    runs = [{"trace_id": f"r{i}", "name": "reservo"} for i in range(1201)]
    runs[3]["experiment"] = "v1"
    server.on("POST", "/v1/api/traces", created(500), created(499, 1), created(201))

    code = run(server, "upload", "--experiment", "v2", write_runs(tmp_path / "runs.jsonl", runs))

    assert code == 0
    batches = [body["traces"] for body in server.bodies("POST", "/v1/api/traces")]
    assert [len(b) for b in batches] == [500, 500, 201]
    sent = [run for batch in batches for run in batch]
    assert [r["trace_id"] for r in sent] == [f"r{i}" for i in range(1201)]
    assert sent[3]["experiment"] == "v1"
    assert {r["experiment"] for i, r in enumerate(sent) if i != 3} == {"v2"}
    assert capsys.readouterr().out == "uploaded 1201 runs (1200 created, 1 unchanged)\n"


def test_it_retries_the_same_batch_after_a_429_with_retry_after(server, tmp_path, capsys):
    limited = problem(429, "Over quota.")
    server.on("POST", "/v1/api/traces", (429, limited[1], {"Retry-After": "1"}), created(2))
    path = write_runs(tmp_path / "runs.jsonl", [{"trace_id": "a"}, {"trace_id": "b"}])

    started = time.monotonic()
    code = run(server, "upload", "--experiment", "v2", path)

    assert code == 0
    assert time.monotonic() - started >= 1.0
    first, second = server.bodies("POST", "/v1/api/traces")
    assert first == second
    assert capsys.readouterr().out == "uploaded 2 runs (2 created, 0 unchanged)\n"


def test_it_gives_up_when_retry_after_would_pass_max_wait(server, tmp_path, capsys):
    server.on("POST", "/v1/api/traces", (429, problem(429, "Over quota.")[1], {"Retry-After": "120"}))
    path = write_runs(tmp_path / "runs.jsonl", [{"trace_id": "a"}])

    started = time.monotonic()
    code = run(server, "upload", "--max-wait", "5", path)

    assert code == 2
    assert time.monotonic() - started < 5
    assert len(server.requests) == 1
    assert "--max-wait 5s" in capsys.readouterr().err


def test_it_prints_the_problem_and_each_field_error_of_a_rejected_batch(server, tmp_path, capsys):
    server.on(
        "POST",
        "/v1/api/traces",
        problem(
            400,
            "The batch is invalid; nothing was written.",
            [
                {"field": "traces[1].spans[0].kind", "message": "must be one of llm, tool, retrieval, agent, other"},
                {"field": "traces[2].started_at", "message": "has no timezone"},
            ],
        ),
    )
    path = tmp_path / "runs.jsonl"
    path.write_text('{"trace_id": "a"}\n\n{"trace_id": "b"}\n{"trace_id": "c"}\n', "utf-8")

    code = run(server, "upload", "--experiment", "v2", str(path))

    assert code == 2
    err = capsys.readouterr().err
    assert "The batch is invalid; nothing was written." in err
    assert f"traces[1].spans[0].kind: must be one of llm, tool, retrieval, agent, other ({path} line 3)" in err
    assert f"traces[2].started_at: has no timezone ({path} line 4)" in err


def test_it_exits_2_on_a_409_conflict(server, tmp_path, capsys):
    server.on("POST", "/v1/api/traces", problem(409, "Run 'a' was already stored with different content."))

    code = run(server, "upload", write_runs(tmp_path / "runs.jsonl", [{"trace_id": "a"}]))

    assert code == 2
    assert "Run 'a' was already stored with different content." in capsys.readouterr().err


def test_it_reads_runs_from_stdin(server, monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", io.StringIO('{"trace_id": "a"}\n{"trace_id": "b", "experiment": "v9"}\n'))
    server.on("POST", "/v1/api/traces", created(2))

    code = run(server, "upload", "--experiment", "v2", "-")

    assert code == 0
    assert server.bodies("POST", "/v1/api/traces") == [
        {"traces": [{"trace_id": "a", "experiment": "v2"}, {"trace_id": "b", "experiment": "v9"}]}
    ]


def test_it_rejects_a_broken_line_before_sending_anything(server, tmp_path, capsys):
    path = tmp_path / "runs.jsonl"
    path.write_text('{"trace_id": "a"}\n{"trace_id": \n', "utf-8")

    code = run(server, "upload", str(path))

    assert code == 2
    assert f"{path} line 2 is not valid JSON" in capsys.readouterr().err
    assert server.requests == []


def test_it_sends_nothing_for_an_empty_file(server, tmp_path, capsys):
    path = tmp_path / "runs.jsonl"
    path.write_text("\n", "utf-8")

    assert run(server, "upload", "--experiment", "v2", str(path)) == 0
    assert server.requests == []
    assert capsys.readouterr().out == "uploaded 0 runs (0 created, 0 unchanged)\n"


def test_the_tracer_uploads_its_runs_in_batches(server):
    tracer = evalgate.Tracer(experiment="v2", dataset="reservo")
    for i in range(3):
        with tracer.run(f"run-{i}", input="q") as traced:
            traced.output = "a"
    server.on("POST", "/v1/api/traces", created(2), created(1))

    totals = tracer.upload(url=server.url, key=KEY, batch_size=2)

    assert totals == {"runs": 3, "created": 3, "unchanged": 0}
    assert [len(b["traces"]) for b in server.bodies("POST", "/v1/api/traces")] == [2, 1]


# -------------------------------------------------------------------------- gate


def gate(server, *args):
    return run(server, "gate", "--dataset", "reservo", "--experiment", "v2", *args)


def test_it_exits_0_on_pass_and_sends_no_baseline_unless_asked(server, capsys):
    server.on("POST", "/v1/api/gate", pass_answer())

    code = gate(server)

    assert code == 0
    assert server.bodies("POST", "/v1/api/gate") == [{"dataset": "reservo", "experiment": "v2", "set_baseline": False}]
    assert capsys.readouterr().out.startswith("GATE: PASS (5/5)\n  quote_focus_pro_3h                     PASS\n")


def test_it_exits_1_on_fail_and_prints_the_seeds_line(server, capsys):
    server.on("POST", "/v1/api/gate", gate_answer())

    code = gate(server, "--baseline", "v1", "--set-baseline")

    assert code == 1
    assert server.bodies("POST", "/v1/api/gate") == [
        {"dataset": "reservo", "experiment": "v2", "baseline": "v1", "set_baseline": True}
    ]
    out = capsys.readouterr().out.splitlines()
    assert out[:2] == [
        "GATE: FAIL (4/5)",
        "  quote_focus_pro_3h                     FAIL  -- tool_choice_ok=False actual_tools=['book_room']",
    ]


def test_it_polls_a_running_gate_until_it_is_done(server, capsys):
    server.on("POST", "/v1/api/gate", (202, {"gate_run_id": 17, "status": "running"}, {}))
    server.on(
        "GET",
        "/v1/api/gate-runs/17",
        {"gate_run_id": 17, "status": "running"},
        {"gate_run_id": 17, "status": "running"},
        gate_answer(),
    )

    code = gate(server, "--poll-interval", "0.01")

    assert code == 1
    assert [r["path"] for r in server.requests] == ["/v1/api/gate"] + ["/v1/api/gate-runs/17"] * 3
    assert capsys.readouterr().out.startswith("GATE: FAIL (4/5)\n")


def test_it_exits_2_when_the_gate_run_failed(server, capsys):
    server.on("POST", "/v1/api/gate", (202, {"gate_run_id": 18, "status": "running"}, {}))
    server.on("GET", "/v1/api/gate-runs/18", {"gate_run_id": 18, "status": "failed", "error": "worker lost"})

    code = gate(server, "--poll-interval", "0.01")

    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith("evalgate: could not decide: gate run 18 failed on the server: worker lost")


def test_it_stops_polling_after_max_wait(server, capsys):
    server.on("POST", "/v1/api/gate", (202, {"gate_run_id": 19, "status": "running"}, {}))
    server.on("GET", "/v1/api/gate-runs/19", {"gate_run_id": 19, "status": "running"})

    code = gate(server, "--poll-interval", "0.05", "--max-wait", "0.2")

    assert code == 2
    assert 3 <= len(server.requests) <= 6
    assert "gate run 19 is still running" in capsys.readouterr().err


def test_it_exits_2_when_the_server_refuses_the_connection(capsys):
    code = evalgate.main(
        [
            "gate",
            "--dataset",
            "reservo",
            "--experiment",
            "v2",
            "--url",
            f"http://127.0.0.1:{closed_port()}",
            "--key",
            KEY,
        ]
    )

    assert code == 2
    assert "connection refused" in capsys.readouterr().err


def test_it_exits_2_for_an_unknown_dataset(server, capsys):
    server.on("POST", "/v1/api/gate", problem(404, 'No dataset "reservo" in this project.'))

    code = gate(server)

    assert code == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert 'answered 404 Problem: No dataset "reservo" in this project.' in captured.err


def test_it_exits_2_for_a_server_error_page(server, capsys):
    server.on("POST", "/v1/api/gate", (500, b"<html><h1>Server Error</h1></html>", {}))

    code = gate(server)

    assert code == 2
    assert len(server.requests) == 1
    assert "500 Internal Server Error" in capsys.readouterr().err


def test_it_exits_2_for_an_answer_that_is_not_json(server, capsys):
    server.on("POST", "/v1/api/gate", (200, b"GATE: PASS", {}))

    code = gate(server)

    assert code == 2
    assert "not JSON" in capsys.readouterr().err


def test_it_exits_2_for_json_that_is_not_a_verdict(server, capsys):
    server.on("POST", "/v1/api/gate", {"verdict": "MAYBE", "cases": []})

    assert gate(server) == 2
    assert "no verdict PASS or FAIL" in capsys.readouterr().err


def test_it_exits_2_when_the_server_is_slower_than_the_timeout(server, capsys):
    def slow():
        time.sleep(1.0)
        return pass_answer()

    server.on("POST", "/v1/api/gate", (200, slow, {}))

    code = gate(server, "--timeout", "0.2")

    assert code == 2
    assert "timed out after 0.2s" in capsys.readouterr().err


def test_it_does_not_follow_a_redirect_with_the_key(server, capsys):
    server.on("POST", "/v1/api/gate", (302, b"", {"Location": "http://elsewhere.invalid/v1/api/gate"}))

    code = gate(server)

    assert code == 2
    assert len(server.requests) == 1
    assert "redirect to http://elsewhere.invalid/v1/api/gate" in capsys.readouterr().err


def test_it_exits_2_without_a_url(monkeypatch, capsys):
    monkeypatch.delenv("EVALSITE_URL", raising=False)

    code = evalgate.main(["gate", "--dataset", "reservo", "--experiment", "v2", "--key", KEY])

    assert code == 2
    assert "pass --url or set EVALSITE_URL" in capsys.readouterr().err


def test_it_accepts_connection_options_before_the_command(server):
    server.on("POST", "/v1/api/gate", pass_answer())

    code = evalgate.main(["--url", server.url, "--key", KEY, "gate", "--dataset", "reservo", "--experiment", "v2"])

    assert code == 0


def test_it_writes_junit_and_appends_the_markdown_summary(server, tmp_path):
    server.on("POST", "/v1/api/gate", gate_answer())
    junit = tmp_path / "reports" / "junit.xml"
    summary = tmp_path / "summary.md"
    summary.write_text("# Earlier step\n", "utf-8")

    code = gate(server, "--junit", str(junit), "--summary", str(summary))

    assert code == 1
    suite = ET.parse(junit).getroot().find("testsuite")
    assert (suite.get("tests"), suite.get("failures")) == ("5", "1")
    text = summary.read_text("utf-8")
    assert text.startswith("# Earlier step\n## \u274c evalsite gate: FAIL (4/5)")


def test_it_still_writes_reports_when_it_cannot_decide(tmp_path):
    junit = tmp_path / "junit.xml"
    summary = tmp_path / "summary.md"
    url = f"http://127.0.0.1:{closed_port()}"

    code = evalgate.main(
        ["gate", "--dataset", "reservo", "--experiment", "v2", "--url", url, "--key", KEY]
        + ["--junit", str(junit), "--summary", str(summary)]
    )

    assert code == 2
    suite = ET.parse(junit).getroot().find("testsuite")
    assert (suite.get("tests"), suite.get("errors")) == ("1", "1")
    assert "connection refused" in suite.find("testcase/error").get("message")
    assert "could not decide" in summary.read_text("utf-8")


def test_it_treats_an_empty_summary_path_as_no_summary(server, tmp_path, monkeypatch):
    # --summary "$GITHUB_STEP_SUMMARY" outside GitHub expands to an empty argument.
    monkeypatch.chdir(tmp_path)
    server.on("POST", "/v1/api/gate", pass_answer())

    assert gate(server, "--summary", "") == 0
    assert list(tmp_path.iterdir()) == []


def test_it_prints_its_version(capsys):
    assert evalgate.main(["--version"]) == 0
    assert capsys.readouterr().out == f"evalgate {evalgate.__version__}\n"
