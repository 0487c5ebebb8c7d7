"""A real OpenAI-compatible chat completions server on loopback, scripted per request.

``judge_server()`` starts a ``ThreadingHTTPServer`` on 127.0.0.1, port 0, in a thread and
yields a ``JudgeServer``: ``url`` (the endpoint to configure, ``.../v1``), ``script(...)``
to queue one behaviour per coming request (``default`` answers when the queue is empty),
and what it saw: ``requests`` (path, headers, parsed JSON body), ``count`` and
``max_in_flight`` (the most requests it was serving at once).
"""

import contextlib
import json
import socket
import ssl
import subprocess
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def completion(content, model="judge-model"):
    """A chat completion body whose first choice says ``content``."""
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
    }


@dataclass
class Behaviour:
    status: int = 200
    body: bytes = b""
    headers: dict = field(default_factory=dict)
    delay: float = 0.0  # before anything is sent
    trickle: float = 0.0  # seconds between bytes of the body (headers sent at once)
    trickle_all: float = 0.0  # seconds between bytes of the whole response, status line included
    endless: bool = False  # stream a body without Content-Length until the client hangs up
    echo_authorization: bool = False  # put the request's Authorization header in the body


def says(content, *, delay=0.0):
    """A 200 whose reply text is ``content``."""
    return Behaviour(body=json.dumps(completion(content)).encode(), delay=delay)


def raw(status, body, *, headers=None, delay=0.0):
    data = body if isinstance(body, bytes) else body.encode()
    return Behaviour(status=status, body=data, headers=headers or {}, delay=delay)


class JudgeServer:
    def __init__(self):
        self.queue = []
        self.default = says('{"score": 1, "reason": "default reply"}')
        # Optional ``choose(record) -> Behaviour | None``: pick by what was asked, not by arrival order.
        self.choose = None
        self.requests = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.httpd = None
        self.url = ""

    def script(self, *behaviours):
        with self.lock:
            self.queue.extend(behaviours)

    @property
    def count(self):
        with self.lock:
            return len(self.requests)

    def _next(self, record):
        with self.lock:
            self.requests.append(record)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            chosen = self.choose(record) if self.choose else None
            if chosen is not None:
                return chosen
            return self.queue.pop(0) if self.queue else self.default

    def _done(self):
        with self.lock:
            self.in_flight -= 1


class _Handler(BaseHTTPRequestHandler):
    server_version = "test-judge/1"

    def log_message(self, format, *args):
        pass

    def do_POST(self):
        judge = self.server.judge
        length = int(self.headers.get("Content-Length") or 0)
        raw_body = self.rfile.read(length)
        try:
            body = json.loads(raw_body)
        except ValueError:
            body = None
        record = {"path": self.path, "headers": dict(self.headers.items()), "body": body}
        behaviour = judge._next(record)
        self.in_flight = True
        try:
            self._answer(judge, behaviour)
        except (BrokenPipeError, ConnectionResetError):
            pass
        finally:
            self._leave(judge)

    def _leave(self, judge):
        """No longer in flight: before the last bytes go out, so a client that has its answer and
        asks again at once is never counted twice (the count said one more than the limit under load)."""
        if self.in_flight:
            self.in_flight = False
            judge._done()

    def _answer(self, judge, b):
        if b.delay and judge.stopping.wait(b.delay):
            return
        body = b.body
        if b.echo_authorization:
            body = json.dumps({"error": {"message": f"bad key: {self.headers.get('Authorization')}"}}).encode()
        if b.trickle_all:
            head = f"HTTP/1.0 {b.status} OK\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
            whole = head.encode() + body
            for i in range(len(whole)):
                if judge.stopping.wait(b.trickle_all):
                    return
                self.wfile.write(whole[i : i + 1])
                self.wfile.flush()
            return
        self.send_response(b.status)
        self.send_header("Content-Type", "application/json")
        for name, value in b.headers.items():
            self.send_header(name, value)
        if not b.endless:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if b.endless:
            chunk = b"x" * 65536
            while not judge.stopping.is_set():
                self.wfile.write(chunk)
            return
        if b.trickle:
            for i in range(len(body)):
                if judge.stopping.wait(b.trickle):
                    return
                self.wfile.write(body[i : i + 1])
                self.wfile.flush()
            return
        self._leave(judge)
        self.wfile.write(body)


@contextlib.contextmanager
def judge_server(*, tls=None):
    """The server; ``tls=(certfile, keyfile)`` serves HTTPS."""
    judge = JudgeServer()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    if tls:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(*tls)
        httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    httpd.daemon_threads = True
    httpd.block_on_close = False
    httpd.judge = judge
    judge.httpd = httpd
    judge.url = f"{'https' if tls else 'http'}://127.0.0.1:{httpd.server_address[1]}/v1"
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield judge
    finally:
        judge.stopping.set()
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def refused_url():
    """An endpoint on a loopback port nothing listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def elapsed(func, *args, **kwargs):
    started = time.monotonic()
    result = func(*args, **kwargs)
    return result, time.monotonic() - started


def self_signed_certificate(folder):
    """``(certfile, keyfile)`` for 127.0.0.1, made with the openssl command line."""
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
         "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True, capture_output=True,
    )  # fmt: skip
    return cert, key
