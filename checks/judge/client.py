"""One HTTP POST to the judge, bounded in time and size. Standard library only.

``http_post(url, body=, headers=, timeout_seconds=)`` returns an ``HttpReply`` for any
HTTP status, or an ``Abstain`` when no status came back:

- ``timeout_seconds`` is a **total** deadline, from the start of the connection to the
  last byte of the reply. Socket timeouts alone would restart on every byte, so a
  server that trickles its reply could hold a call forever: each step sets the socket
  timeout to the time left, the body is read in chunks against a monotonic deadline,
  and a watchdog timer shuts the socket down when the deadline passes, whatever the
  call is waiting for (TLS handshake, status line, headers, body). Past the deadline:
  ``Abstain("timeout")``. (Resolving the host name is left to the system resolver.)
- At most ``max_bytes`` of a reply are read. A longer reply (by its Content-Length, or
  by counting) comes back with ``truncated=True`` and the rest is never read.
- Connection refused, unknown host, TLS failure, a connection broken mid-reply:
  ``Abstain("unreachable")`` with the error's text and the phase it happened in.
- HTTPS verifies certificates with the system's trust store. Environment proxy
  variables are not used.

Nothing here sees the api key except inside ``headers``; callers redact replies
(``checks.judge.redaction``) before quoting them anywhere.
"""

import contextlib
import functools
import http.client
import os
import socket
import ssl
import threading
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

from checks.scorers.base import Abstain

MAX_REPLY_BYTES = 1024 * 1024
_CHUNK_BYTES = 64 * 1024


@dataclass(frozen=True)
class HttpReply:
    status: int
    body: bytes
    truncated: bool  # the reply was longer than max_bytes; body holds at most max_bytes of it
    headers: dict  # lower-cased names
    elapsed_seconds: float


class _Watchdog:
    """Shuts the call's socket down when the deadline passes, so no read can outlive it."""

    def __init__(self, seconds):
        self._lock = threading.Lock()
        self._sock = None
        self._done = False
        self.fired = False
        self._timer = threading.Timer(max(seconds, 0), self._fire)
        self._timer.daemon = True

    def start(self):
        self._timer.start()

    def watch(self, sock):
        with self._lock:
            self._sock = sock
            if self.fired:
                self._shutdown()

    def _fire(self):
        with self._lock:
            if self._done:
                return
            self.fired = True
            self._shutdown()

    def _shutdown(self):
        if self._sock is None:
            return
        # The plain socket's shutdown, also for a TLS socket: it wakes a blocked read
        # without tearing down the TLS object under the reading thread.
        with contextlib.suppress(OSError):
            socket.socket.shutdown(self._sock, socket.SHUT_RDWR)

    def stop(self):
        with self._lock:
            self._done = True
            self._timer.cancel()


class _Timeout(Exception):
    pass


def http_post(url, *, body, headers, timeout_seconds, max_bytes=MAX_REPLY_BYTES):
    """POST ``body`` to ``url``; an ``HttpReply`` (any status) or an ``Abstain`` (no status)."""
    call = _Call(url, timeout_seconds)
    call.watchdog.start()
    try:
        return call.post(body, headers, max_bytes)
    except Exception as exc:
        return call.failure(exc)
    finally:
        call.close()


class _Call:
    """One POST under one deadline, connect to last byte; ``phase`` names where it is."""

    def __init__(self, url, timeout_seconds):
        self.started = time.monotonic()
        self.timeout_seconds = timeout_seconds
        self.deadline = self.started + timeout_seconds
        self.parts = urlsplit(url)
        self.watchdog = _Watchdog(timeout_seconds)
        self.phase = "connect"
        self.sock = None

    def time_left(self):
        left = self.deadline - time.monotonic()
        if left <= 0 or self.watchdog.fired:
            raise _Timeout()
        return left

    def connect(self):
        parts = self.parts
        https = parts.scheme == "https"
        host = parts.hostname
        port = parts.port or (443 if https else 80)
        self.sock = socket.create_connection((host, port), timeout=self.time_left())
        self.watchdog.watch(self.sock)
        if not https:
            return http.client.HTTPConnection(host, port)
        context = tls_context()
        self.sock = context.wrap_socket(self.sock, server_hostname=host, do_handshake_on_connect=False)
        self.watchdog.watch(self.sock)
        self.sock.settimeout(self.time_left())
        self.sock.do_handshake()
        return http.client.HTTPSConnection(host, port, context=context)

    def post(self, body, headers, max_bytes):
        connection = self.connect()
        # The socket is ours (connected under the deadline and the watchdog): no connect() here.
        connection.sock = self.sock
        self.phase = "send"
        self.sock.settimeout(self.time_left())
        path = (self.parts.path or "/") + (f"?{self.parts.query}" if self.parts.query else "")
        connection.request("POST", path, body=body, headers=headers)
        self.phase = "receive"
        self.sock.settimeout(self.time_left())
        response = connection.getresponse()
        reply_headers = {name.lower(): value for name, value in response.getheaders()}
        declared = _content_length(reply_headers)
        received = self.read(response, max_bytes) if declared is None or declared <= max_bytes else b""
        # A read the watchdog cut short ends like a normal end of stream: check it.
        self.time_left()
        truncated = len(received) > max_bytes or (declared is not None and declared > max_bytes)
        return HttpReply(
            status=response.status,
            body=received[:max_bytes],
            truncated=truncated,
            headers=reply_headers,
            elapsed_seconds=time.monotonic() - self.started,
        )

    def read(self, response, max_bytes):
        """The body, read until its end or one byte past ``max_bytes``."""
        chunks, received = [], 0
        while received <= max_bytes:
            self.sock.settimeout(self.time_left())
            chunk = response.read1(min(_CHUNK_BYTES, max_bytes + 1 - received))
            if not chunk:
                break
            chunks.append(chunk)
            received += len(chunk)
        return b"".join(chunks)

    def failure(self, exc):
        """The ``Abstain`` for a call that got no status; anything but a network error is raised."""
        if isinstance(exc, _Timeout | TimeoutError) or self.watchdog.fired or time.monotonic() >= self.deadline:
            return Abstain(
                "timeout",
                {
                    "message": f"the judge did not answer within {self.timeout_seconds:g} s (connect to last byte)",
                    "timeout_seconds": self.timeout_seconds,
                    "phase": self.phase,
                },
            )
        if not isinstance(exc, OSError | http.client.HTTPException | ValueError):
            raise exc
        return Abstain(
            "unreachable",
            {
                "message": f"the judge could not be reached ({self.phase}): {_error_text(exc)}",
                "error": _error_text(exc),
                "phase": self.phase,
            },
        )

    def close(self):
        self.watchdog.stop()
        if self.sock is not None:
            with contextlib.suppress(OSError):
                self.sock.close()


def tls_context():
    """A certificate-checking TLS context, shared by calls (loading the trust store costs milliseconds).

    Made anew when ``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` change, which is how a private CA
    is trusted.
    """
    return _tls_context(os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))


@functools.lru_cache(maxsize=4)
def _tls_context(cert_file, cert_dir):
    context = ssl.create_default_context()
    context.set_alpn_protocols(["http/1.1"])
    return context


def _content_length(headers):
    try:
        value = int(headers.get("content-length", ""))
    except ValueError:
        return None
    return value if value >= 0 else None


def _error_text(exc):
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}"[:500]
