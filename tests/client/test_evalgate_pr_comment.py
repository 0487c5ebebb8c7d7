"""``evalgate gate --comment github|gitlab``: the verdict as one sticky comment on the pull or
merge request, against a fake GitHub / GitLab REST API on loopback that keeps the comments
it is sent and records every request.

The gate itself answers from the scripted evalsite of the protocol tests.
"""

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib import parse as urlparse

import pytest

import evalgate
from tests.client import test_evalgate_protocol as protocol
from tests.client.test_evalgate_protocol import gate
from tests.client.test_evalgate_report import gate_answer, pass_answer

server = protocol.server  # the scripted evalsite, not conftest's live one

TOKEN = "ghp_test_token"
MARKER = "<!-- evalgate -->"  # the older clients' marker


def marker(server, dataset="reservo"):
    """The first line of the comment of the gate of ``dataset`` on the scripted ``server``."""
    return f"<!-- evalgate server={server.url.removeprefix('http://')} dataset={dataset} -->"


ROUTES = {
    # GitHub: a pull request's comments are its issue's comments.
    "github": (r"/api/v3/repos/acme/agent/issues/7/comments", r"/api/v3/repos/acme/agent/issues/comments/(\d+)", "PATCH"),
    "gitlab": (r"/api/v4/projects/42/merge_requests/5/notes", r"/api/v4/projects/42/merge_requests/5/notes/(\d+)", "PUT"),
}  # fmt: skip


class Forge:
    """A request's comments as GitHub or GitLab keeps them: list (paged), create, edit."""

    def __init__(self, kind, url):
        self.kind, self.url = kind, url
        self.comments = {}  # id -> body, in creation order
        self.requests = []
        self.refuse = None  # a status to answer every request with
        self.lock = threading.Lock()

    def seed(self, *bodies):
        for body in bodies:
            self.comments[len(self.comments) + 1] = body

    def answer(self, handler):
        length = int(handler.headers.get("Content-Length") or 0)
        body = json.loads(handler.rfile.read(length)) if length else None
        parts = urlparse.urlsplit(handler.path)
        with self.lock:
            self.requests.append({"method": handler.command, "path": handler.path, "headers": dict(handler.headers)})
            status, payload = self._route(handler.command, parts.path, urlparse.parse_qs(parts.query), body)
        raw = json.dumps(payload).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(raw)))
        handler.end_headers()
        handler.wfile.write(raw)

    def _route(self, method, path, query, body):
        if self.refuse:
            return self.refuse, {"message": "Resource not accessible by integration"}
        listing, one, edit = ROUTES[self.kind]
        if re.fullmatch(listing, path) and method == "GET":
            size, page = int(query["per_page"][0]), int(query["page"][0])
            rows = [{"id": i, "body": b} for i, b in self.comments.items()][(page - 1) * size : page * size]
            return 200, rows
        if re.fullmatch(listing, path) and method == "POST":
            self.seed(body["body"])
            return 201, self._comment(len(self.comments))
        match = re.fullmatch(one, path)
        if match and method == edit and int(match.group(1)) in self.comments:
            self.comments[int(match.group(1))] = body["body"]
            return 200, self._comment(int(match.group(1)))
        return 404, {"message": "404 Not Found"}

    def _comment(self, number):
        return {"id": number, "body": self.comments[number], "html_url": f"{self.url}/comment/{number}"}

    def writes(self):
        return [(r["method"], r["path"]) for r in self.requests if r["method"] != "GET"]

    def ours(self):
        return [body for body in self.comments.values() if body.startswith("<!-- evalgate")]


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        self.server.forge.answer(self)

    def do_POST(self):
        self.server.forge.answer(self)

    def do_PATCH(self):
        self.server.forge.answer(self)

    def do_PUT(self):
        self.server.forge.answer(self)

    def log_message(self, *args):
        pass


def forge_server(kind):
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    httpd.forge = Forge(kind, f"http://127.0.0.1:{httpd.server_address[1]}")
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    return httpd


@pytest.fixture
def github(monkeypatch, tmp_path):
    httpd = forge_server("github")
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": 7}}))
    for name in ("EVALGATE_GITHUB_TOKEN", "GITHUB_REF"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GITHUB_API_URL", httpd.forge.url + "/api/v3")
    monkeypatch.setenv("GITHUB_REPOSITORY", "acme/agent")
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(event))
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    yield httpd.forge
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def gitlab(monkeypatch):
    httpd = forge_server("gitlab")
    monkeypatch.setenv("CI_API_V4_URL", httpd.forge.url + "/api/v4")
    monkeypatch.setenv("CI_PROJECT_ID", "42")
    monkeypatch.setenv("CI_MERGE_REQUEST_IID", "5")
    monkeypatch.setenv("EVALGATE_GITLAB_TOKEN", "glpat-test")
    yield httpd.forge
    httpd.shutdown()
    httpd.server_close()


def test_it_comments_the_verdict_on_the_pull_request(server, github, capsys):
    server.on("POST", "/v1/api/gate", gate_answer())

    code = gate(server, "--comment", "github")

    assert code == 1
    assert github.writes() == [("POST", "/api/v3/repos/acme/agent/issues/7/comments")]
    (body,) = github.ours()
    assert body.startswith(marker(server) + "\n## \u274c evalsite gate: FAIL (4/5)\n")
    assert "| `quote_focus_pro_3h` | FAIL |" in body
    headers = github.requests[-1]["headers"]
    assert headers["Authorization"] == f"Bearer {TOKEN}"
    assert headers["Accept"] == "application/vnd.github+json"
    assert "created the github comment" in capsys.readouterr().err


def test_it_updates_its_comment_instead_of_adding_another(server, github):
    github.seed("Looks good to me")
    server.on("POST", "/v1/api/gate", gate_answer(), pass_answer())

    first = gate(server, "--comment", "github")
    second = gate(server, "--comment", "github")

    assert (first, second) == (1, 0)
    assert github.writes() == [
        ("POST", "/api/v3/repos/acme/agent/issues/7/comments"),
        ("PATCH", "/api/v3/repos/acme/agent/issues/comments/2"),
    ]
    assert github.comments[1] == "Looks good to me"
    (body,) = github.ours()
    assert "evalsite gate: PASS (5/5)" in body


def test_it_finds_its_comment_past_the_first_page(server, github):
    github.seed(*[f"comment {i}" for i in range(150)], f"{marker(server)}\nold verdict")
    server.on("POST", "/v1/api/gate", pass_answer())

    assert gate(server, "--comment", "github") == 0

    assert github.writes() == [("PATCH", "/api/v3/repos/acme/agent/issues/comments/151")]
    assert len(github.comments) == 151


def test_two_gates_of_one_pull_request_keep_a_comment_each(server, github):
    server.on("POST", "/v1/api/gate", gate_answer(), pass_answer(), pass_answer())

    first = gate(server, "--comment", "github")
    other = run_gate(server, "billing", "--comment", "github")
    again = gate(server, "--comment", "github")

    assert (first, other, again) == (1, 0, 0)
    assert github.writes() == [
        ("POST", "/api/v3/repos/acme/agent/issues/7/comments"),
        ("POST", "/api/v3/repos/acme/agent/issues/7/comments"),
        ("PATCH", "/api/v3/repos/acme/agent/issues/comments/1"),
    ]
    assert [body.split("\n", 1)[0] for body in github.ours()] == [marker(server), marker(server, "billing")]
    assert "PASS (5/5)" in github.comments[1] and "PASS (5/5)" in github.comments[2]


def test_a_dataset_of_the_same_name_on_another_server_is_another_gate(server, github):
    github.seed("<!-- evalgate server=evals.example.com dataset=reservo -->\nthe other server's verdict")
    server.on("POST", "/v1/api/gate", pass_answer())

    assert gate(server, "--comment", "github") == 0

    assert github.writes() == [("POST", "/api/v3/repos/acme/agent/issues/7/comments")]
    assert github.comments[1].endswith("the other server's verdict")


def test_it_takes_over_the_comment_an_older_client_wrote(server, github):
    github.seed(f"{MARKER}\nold verdict")
    server.on("POST", "/v1/api/gate", pass_answer())

    assert gate(server, "--comment", "github") == 0

    assert github.writes() == [("PATCH", "/api/v3/repos/acme/agent/issues/comments/1")]
    assert github.comments[1].startswith(marker(server) + "\n")


def test_the_marker_encodes_what_could_end_the_html_comment():
    assert evalgate.comment_marker("a b-->c", "https://evals.example.com/v1/api/") == (
        "<!-- evalgate server=evals.example.com dataset=a%20b--%3Ec -->"
    )
    assert evalgate.comment_marker() == MARKER


def run_gate(server, dataset, *args):
    return protocol.run(server, "gate", "--dataset", dataset, "--experiment", "v2", *args)


def test_it_comments_on_the_gitlab_merge_request_and_updates_the_note(server, gitlab):
    server.on("POST", "/v1/api/gate", gate_answer(), pass_answer())

    gate(server, "--comment", "gitlab")
    gate(server, "--comment", "gitlab")

    assert gitlab.writes() == [
        ("POST", "/api/v4/projects/42/merge_requests/5/notes"),
        ("PUT", "/api/v4/projects/42/merge_requests/5/notes/1"),
    ]
    assert gitlab.requests[0]["headers"]["Authorization"] == "Bearer glpat-test"
    assert "evalsite gate: PASS (5/5)" in gitlab.comments[1]
    assert gitlab.comments[1].startswith(marker(server) + "\n")


def test_two_gates_of_one_merge_request_keep_a_note_each(server, gitlab):
    server.on("POST", "/v1/api/gate", gate_answer(), pass_answer())

    run_gate(server, "reservo", "--comment", "gitlab")
    run_gate(server, "billing", "--comment", "gitlab")

    assert gitlab.writes() == [
        ("POST", "/api/v4/projects/42/merge_requests/5/notes"),
        ("POST", "/api/v4/projects/42/merge_requests/5/notes"),
    ]
    assert "FAIL (4/5)" in gitlab.comments[1] and "PASS (5/5)" in gitlab.comments[2]


def test_it_comments_when_it_could_not_decide(server, github):
    server.on("POST", "/v1/api/gate", protocol.problem(404, 'No dataset "reservo".'))

    assert gate(server, "--comment", "github") == 2

    (body,) = github.ours()
    assert "could not decide" in body.lower()


def test_it_posts_nothing_outside_a_pull_request(server, github, monkeypatch, tmp_path, capsys):
    push = tmp_path / "push.json"
    push.write_text(json.dumps({"ref": "refs/heads/main"}))
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(push))
    server.on("POST", "/v1/api/gate", pass_answer())

    assert gate(server, "--comment", "github") == 0

    assert github.requests == []
    assert "no comment" in capsys.readouterr().err


def test_a_refused_comment_is_a_warning_and_the_verdict_stands(server, github, capsys):
    github.refuse = 403
    server.on("POST", "/v1/api/gate", gate_answer())

    assert gate(server, "--comment", "github") == 1

    err = capsys.readouterr().err
    assert "warning: no github comment" in err
    assert "403 Forbidden: Resource not accessible by integration" in err


def test_the_comment_is_cut_short_under_githubs_limit():
    body = evalgate.comment_body("x" * 100_000)

    assert len(body) < 65_536
    assert body.startswith(MARKER)
    assert "cut short" in body
