"""A webhook receiver on loopback for tests: checks each signature, fails the first ones."""

import contextlib
import hashlib
import hmac
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def signature_valid(secret, header, body):
    """Verify ``X-Evalsite-Signature`` as a receiver would (docs/monitors.md)."""
    parts = dict(item.split("=", 1) for item in header.split(","))
    expected = hmac.new(secret.encode(), parts["t"].encode() + b"." + body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, parts["v1"])


@contextlib.contextmanager
def webhook_receiver(*, secret, failures=0):
    """Yields ``(url, received)``: ``received`` lists ``(status answered, body, signature valid)``."""
    received, lock = [], threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers["Content-Length"]))
            valid = signature_valid(secret, self.headers.get("X-Evalsite-Signature", "t=0,v1=x"), body)
            with lock:
                status = 500 if len(received) < failures else (200 if valid else 401)
                received.append((status, body, valid))
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/hook", received
    finally:
        server.shutdown()
        server.server_close()
