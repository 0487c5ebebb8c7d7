"""One HTTP POST to the judge through ``httpx``, bounded in time and size.

``http_post(url, body=, headers=, deadline=)`` returns an ``HttpReply`` for any HTTP
status, or an ``Abstain`` when no status came back:

- ``deadline`` (a ``time.monotonic()`` instant) is a **total** deadline, from the start
  of the connection to the last byte of the reply. httpx's timeouts restart on every
  read, so a server that trickles its reply could hold a call for ever: each phase gets
  the time left as its httpx timeout, and a watchdog timer shuts the socket down when
  the deadline passes, whatever the call is waiting for (TLS handshake, status line,
  headers, body). httpx hands the socket over through its ``trace`` extension as soon
  as the connection is open. Past the deadline: ``Abstain("timeout")``. (Resolving the
  host name is left to the system resolver.)
- At most ``max_bytes`` of a reply are read. A longer reply (by its Content-Length, or
  by counting) comes back with ``truncated=True`` and the rest is never read. The reply
  is asked for without content encoding, so those are the bytes that are parsed.
- Connection refused, unknown host, TLS failure, a connection broken mid-reply:
  ``Abstain("unreachable")`` with the underlying error's text and the phase it happened in.
- Where the call may go is ``checks.outbound``'s rule, checked twice: the URL's host
  (every address it resolves to) before connecting, then the address the socket actually
  connected to, before a byte is sent (a name may resolve elsewhere a moment later). A
  refused target is ``Abstain("address_refused")`` naming why; nothing is sent to it.
  ``allow_private`` lets loopback and private addresses through.
- HTTPS verifies certificates with the system's trust store (``SSL_CERT_FILE`` /
  ``SSL_CERT_DIR`` add a private CA). Environment proxy variables are not used.

Nothing here sees the api key except inside ``headers``; callers redact replies
(``checks.judge.redaction``) before quoting them anywhere.
"""

import contextlib
import functools
import os
import socket
import ssl
import threading
import time
from dataclasses import dataclass

import httpx

from checks.outbound import address_refusal, host_refusal
from checks.scorers.base import Abstain

MAX_REPLY_BYTES = 1024 * 1024
_CHUNK_BYTES = 64 * 1024
# httpx's trace events, by the phase of the call they start.
_PHASES = {
    "connection.start_tls.started": "connect",
    "http11.send_request_headers.started": "send",
    "http11.receive_response_headers.started": "receive",
}


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


class _Refused(Exception):
    """The address the call connected to is one the outbound rule refuses."""


def http_post(url, *, body, headers, deadline, max_bytes=MAX_REPLY_BYTES, allow_private=False):
    """POST ``body`` to ``url`` before ``deadline``; an ``HttpReply`` (any status) or an ``Abstain``."""
    refusal = _url_refusal(url, allow_private)
    if refusal is not None:
        return _refused(refusal)
    call = _Call(deadline, allow_private)
    call.watchdog.start()
    try:
        return call.post(url, body, headers, max_bytes)
    except Exception as exc:
        return call.failure(exc)
    finally:
        call.watchdog.stop()


class _Call:
    """One POST under one deadline, connect to last byte; ``phase`` names where it is."""

    def __init__(self, deadline, allow_private):
        self.allow_private = allow_private
        self.started = time.monotonic()
        self.deadline = deadline
        self.watchdog = _Watchdog(deadline - self.started)
        self.phase = "connect"

    def time_left(self):
        left = self.deadline - time.monotonic()
        if left <= 0 or self.watchdog.fired:
            raise _Timeout()
        return left

    def trace(self, event, info):
        """httpx's ``trace`` hook: follows the phase, and hands the open socket to the watchdog."""
        self.phase = _PHASES.get(event, self.phase)
        if event in ("connection.connect_tcp.complete", "connection.start_tls.complete"):
            stream = info.get("return_value")
            sock = stream.get_extra_info("socket") if stream is not None else None
            if sock is not None:
                self.watchdog.watch(sock)
                if event == "connection.connect_tcp.complete":
                    self.check_peer(sock)

    def check_peer(self, sock):
        """The connected address, judged before the request is sent (see the module docstring)."""
        try:
            peer = sock.getpeername()[0]
        except OSError:
            return
        refusal = address_refusal(peer.split("%")[0], allow_private=self.allow_private)
        if refusal is not None:
            with contextlib.suppress(OSError):
                socket.socket.shutdown(sock, socket.SHUT_RDWR)
            raise _Refused(refusal)

    def post(self, url, body, headers, max_bytes):
        headers = {**headers, "Accept-Encoding": "identity"}
        with httpx.Client(verify=tls_context(), trust_env=False, follow_redirects=False) as client:
            request = client.build_request(
                "POST",
                url,
                content=body,
                headers=headers,
                timeout=httpx.Timeout(self.time_left()),
                extensions={"trace": self.trace},
            )
            response = client.send(request, stream=True)
            try:
                return self.reply(response, max_bytes)
            finally:
                response.close()

    def reply(self, response, max_bytes):
        declared = _content_length(response.headers)
        received = self.read(response, max_bytes) if declared is None or declared <= max_bytes else b""
        # A read the watchdog cut short ends like a normal end of stream: check it.
        self.time_left()
        truncated = len(received) > max_bytes or (declared is not None and declared > max_bytes)
        return HttpReply(
            status=response.status_code,
            body=received[:max_bytes],
            truncated=truncated,
            headers={name.lower(): value for name, value in response.headers.items()},
            elapsed_seconds=time.monotonic() - self.started,
        )

    def read(self, response, max_bytes):
        """The body, read until its end or one byte past ``max_bytes``."""
        chunks, received = [], 0
        for chunk in response.iter_raw(_CHUNK_BYTES):
            chunks.append(chunk)
            received += len(chunk)
            if received > max_bytes:
                break
            self.time_left()
        return b"".join(chunks)

    def failure(self, exc):
        """The ``Abstain`` for a call that got no status; anything but a network error is raised."""
        refused = _refused_cause(exc)
        if refused is not None:
            return _refused(str(refused))
        timed_out = isinstance(exc, _Timeout | httpx.TimeoutException)
        if timed_out or self.watchdog.fired or time.monotonic() >= self.deadline:
            seconds = round(self.deadline - self.started, 3)
            return Abstain(
                "timeout",
                {
                    "message": f"the judge did not answer within {seconds:g} s (connect to last byte)",
                    "phase": self.phase,
                },
            )
        if not isinstance(exc, httpx.TransportError | OSError | ValueError):
            raise exc
        error = _error_text(exc)
        return Abstain(
            "unreachable",
            {"message": f"the judge could not be reached ({self.phase}): {error}", "error": error, "phase": self.phase},
        )


def _url_refusal(url, allow_private):
    try:
        host = httpx.URL(url).host
    except (httpx.InvalidURL, TypeError):
        return None  # httpx refuses it itself, as an unreachable call
    return host_refusal(host, allow_private=allow_private)


def _refused(refusal):
    return Abstain("address_refused", {"message": f"the judge may not be called there: {refusal}"})


def _refused_cause(exc):
    for _ in range(8):
        if exc is None or isinstance(exc, _Refused):
            return exc
        exc = exc.__cause__ or exc.__context__
    return None


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
    """The text of the error underneath httpx's (``ConnectionRefusedError: ...``, not ``ConnectError``)."""
    root = exc
    for _ in range(8):
        # httpcore keeps the socket's error as its argument, with the context suppressed.
        inner = root.__cause__ or root.__context__ or next(iter(root.args), None)
        if not isinstance(inner, BaseException):
            break
        root = inner
    text = str(root) or type(root).__name__
    return f"{type(root).__name__}: {text}"[:500]
