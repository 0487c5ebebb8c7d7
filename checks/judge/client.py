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
    started = time.monotonic()
    deadline = started + timeout_seconds
    parts = urlsplit(url)
    https = parts.scheme == "https"
    host = parts.hostname
    port = parts.port or (443 if https else 80)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    watchdog = _Watchdog(timeout_seconds)
    phase = "connect"
    sock = None

    def time_left():
        left = deadline - time.monotonic()
        if left <= 0 or watchdog.fired:
            raise _Timeout()
        return left

    watchdog.start()
    try:
        sock = socket.create_connection((host, port), timeout=time_left())
        watchdog.watch(sock)
        if https:
            context = tls_context()
            sock = context.wrap_socket(sock, server_hostname=host, do_handshake_on_connect=False)
            watchdog.watch(sock)
            sock.settimeout(time_left())
            sock.do_handshake()
            connection = http.client.HTTPSConnection(host, port, context=context)
        else:
            connection = http.client.HTTPConnection(host, port)
        # The socket is ours (connected under the deadline and the watchdog): no connect() here.
        connection.sock = sock
        phase = "send"
        sock.settimeout(time_left())
        connection.request("POST", path, body=body, headers=headers)
        phase = "receive"
        sock.settimeout(time_left())
        response = connection.getresponse()
        reply_headers = {name.lower(): value for name, value in response.getheaders()}
        declared = _content_length(reply_headers)
        chunks, received = [], 0
        if declared is None or declared <= max_bytes:
            while received <= max_bytes:
                sock.settimeout(time_left())
                chunk = response.read1(min(_CHUNK_BYTES, max_bytes + 1 - received))
                if not chunk:
                    break
                chunks.append(chunk)
                received += len(chunk)
        # A read the watchdog cut short ends like a normal end of stream: check it.
        time_left()
        truncated = received > max_bytes or (declared is not None and declared > max_bytes)
        return HttpReply(
            status=response.status,
            body=b"".join(chunks)[:max_bytes],
            truncated=truncated,
            headers=reply_headers,
            elapsed_seconds=time.monotonic() - started,
        )
    except Exception as exc:
        if isinstance(exc, _Timeout | TimeoutError) or watchdog.fired or time.monotonic() >= deadline:
            return Abstain(
                "timeout",
                {
                    "message": f"the judge did not answer within {timeout_seconds:g} s (connect to last byte)",
                    "timeout_seconds": timeout_seconds,
                    "phase": phase,
                },
            )
        if not isinstance(exc, OSError | http.client.HTTPException | ValueError):
            raise
        return Abstain(
            "unreachable",
            {
                "message": f"the judge could not be reached ({phase}): {_error_text(exc)}",
                "error": _error_text(exc),
                "phase": phase,
            },
        )
    finally:
        watchdog.stop()
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.close()


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
