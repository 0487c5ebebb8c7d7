"""The HTTP side: one small JSON client for ``/v1/api/``, its wait budget and its errors.

Redirects are never followed, so the key only goes to the configured server. Transient
answers are asked again by the RetryPolicy: 429 always (the server did nothing), 502, 503
and 504 when the request is safe to repeat, after ``Retry-After`` and within the
WaitBudget. Every failure is an EvalgateError (ApiError for an error answer, with the
problem+json body).
"""

from __future__ import annotations

import email.utils
import http.client
import json
import math
import os
import socket
import time
from datetime import datetime, timezone
from typing import Any
from urllib import error as urlerror
from urllib import parse as urlparse
from urllib import request as urlrequest

from .errors import ApiError, EvalgateError
from .version import __version__

JSON = "application/json"

DEFAULT_TIMEOUT = 60.0
DEFAULT_MAX_WAIT = 300.0
DEFAULT_RETRIES = 8


# datetime.UTC only exists from 3.11; the package runs on 3.9.
UTC = timezone.utc  # noqa: UP017


class WaitBudget:
    """The seconds one command may spend waiting: Retry-After pauses and gate polling.

    Time spent in requests themselves is bounded by ``--timeout`` instead, so the sum of
    sleeps is what is counted here (and what a test can check without a clock).
    """

    def __init__(self, max_wait: float = DEFAULT_MAX_WAIT, sleep=time.sleep):
        self.max_wait = float(max_wait)
        self.waited = 0.0
        self._sleep = sleep

    def wait(self, seconds: float, why: str, *, partial: bool = False) -> None:
        """Sleep ``seconds``, or raise EvalgateError when the budget cannot cover it.

        ``partial`` (polling) sleeps whatever is left of the budget for one last look;
        a Retry-After is all or nothing, since asking again sooner only earns another 429.
        """
        remaining = self.max_wait - self.waited
        if remaining <= 0 or (not partial and seconds > remaining):
            raise EvalgateError(
                f"{why}; gave up after waiting {self.waited:g}s (--max-wait {self.max_wait:g}s)"
                + ("" if partial else f", the server asked for {seconds:g}s more")
            )
        seconds = min(seconds, remaining)
        self._sleep(seconds)
        self.waited += seconds


class RetryPolicy:
    """Which answers are asked again, and how many times (the WaitBudget bounds the time).

    The rules urllib3's ``Retry`` applies, on the standard library (the client installs
    nothing beside itself):

    - 429 Too Many Requests is retried for every request: the server refused it unread.
    - 502, 503 and 504 are retried for a request that is safe to repeat (``idempotent``):
      a GET, or a POST the server stores once however often it is sent (runs by trace id,
      a golden set's import by case name, the gate). evalsite answers 503 with
      Retry-After while its database is busy, having written nothing; a proxy's 502 or
      504 may come after the server did the work, so anything else is not repeated.
    - The wait is the answer's ``Retry-After``, else a backoff of 1, 2, 4 ... 30 seconds.
    - At most ``retries`` retries per request; after that the last answer is the error.
    """

    ALWAYS = frozenset({429})
    WHEN_IDEMPOTENT = frozenset({502, 503, 504})

    def __init__(self, retries: int = DEFAULT_RETRIES, *, backoff: float = 1.0, max_backoff: float = 30.0):
        self.retries = int(retries)
        self.backoff = float(backoff)
        self.max_backoff = float(max_backoff)

    def retries_status(self, status: int, *, idempotent: bool) -> bool:
        return status in self.ALWAYS or (idempotent and status in self.WHEN_IDEMPOTENT)

    def delay(self, retry: int, retry_after: str | None) -> float:
        """Seconds before retry number ``retry`` (0 for the first)."""
        asked = _retry_after_seconds(retry_after)
        if asked is not None:
            return asked
        return min(self.backoff * (2**retry), self.max_backoff)


class _NoRedirect(urlrequest.HTTPRedirectHandler):
    # urllib would re-send the Authorization header to wherever a redirect points, and
    # turn a redirected POST into a GET; refusing makes a wrong --url a clear error.
    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


def base_url(url: str) -> str:
    """The server's root from what a user typed: no trailing slash, no ``/v1/api`` suffix."""
    url = (url or "").strip()
    parts = urlparse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise EvalgateError(f"the server URL must start with http:// or https://, got {url!r}")
    url = url.rstrip("/")
    if url.endswith("/v1/api"):
        url = url[: -len("/v1/api")]
    return url


class Client:
    """A small JSON client for evalsite's ``/v1/api/``.

    ``request`` returns ``(status, body)`` for a 2xx answer and raises ApiError for any
    other, EvalgateError when the server cannot be reached or its answer cannot be read.
    Transient answers are retried by the RetryPolicy within the WaitBudget.
    """

    def __init__(
        self,
        url: str,
        key: str,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        budget: WaitBudget | None = None,
        retry: RetryPolicy | None = None,
    ):
        self.base = base_url(url)
        self.key = key
        self.timeout = float(timeout)
        self.budget = budget or WaitBudget()
        self.retry = retry or RetryPolicy()
        self.headers: dict = {}  # sent with every request, beside the ones below
        self._opener = urlrequest.build_opener(_NoRedirect)

    def url(self, path: str) -> str:
        return f"{self.base}/v1/api/{path.lstrip('/')}"

    def follow(self, link: str, current: str) -> str:
        """Where a pagination link points, kept on the configured server.

        Behind a proxy the server may build links with its internal host or scheme;
        re-anchoring them on ``--url`` follows the same path without ever sending the
        key to a host the user did not name.
        """
        target = urlparse.urlsplit(urlparse.urljoin(current, link))
        base = urlparse.urlsplit(self.base)
        path = target.path
        if base.path and not path.startswith(base.path + "/"):  # a proxy that strips its prefix
            path = base.path + path
        return urlparse.urlunsplit((base.scheme, base.netloc, path, target.query, ""))

    def request(
        self,
        method: str,
        url: str,
        body: Any = None,
        *,
        raw_body: bytes | None = None,
        content_type: str = JSON,
        idempotent: bool | None = None,
    ) -> tuple[int, Any]:
        """Send ``body`` as JSON (or ``raw_body`` as ``content_type``); the answer's JSON.

        ``idempotent`` (default: only for GET) lets 502/503/504 be retried: pass True for
        a POST the server stores once however often it is sent.
        """
        data = raw_body if raw_body is not None else (None if body is None else json.dumps(body).encode("utf-8"))
        if idempotent is None:
            idempotent = method in ("GET", "HEAD")
        retry = 0
        while True:
            status, headers, raw = self._send(method, url, data, content_type)
            if not self.retry.retries_status(status, idempotent=idempotent) or retry >= self.retry.retries:
                break
            wait = self.retry.delay(retry, headers.get("Retry-After"))
            reason = http.client.responses.get(status, "")
            self.budget.wait(wait, f"{method} {url} answered {status} {reason}")
            retry += 1
        if 300 <= status < 400:
            raise EvalgateError(
                f"{method} {url} answered {status}, a redirect to {headers.get('Location') or '(no Location)'}; "
                "set --url / EVALSITE_URL to the address the server answers on "
                "(evalgate does not follow redirects, so the key is only sent to the server you name)"
            )
        if status >= 400 or status < 200:
            error = _api_error(method, url, status, raw)
            if retry:
                error.details.append(f"asked {retry + 1} times (at most {self.retry.retries} retries)")
            raise error
        return status, _json_body(method, url, status, raw)

    def _send(self, method: str, url: str, data: bytes | None, content_type: str = JSON):
        headers = {
            "Accept": "application/json",
            "Authorization": f"Bearer {self.key}",
            "User-Agent": f"evalgate/{__version__}",
            **self.headers,
        }
        if data is not None:
            headers["Content-Type"] = content_type
        req = urlrequest.Request(url, data=data, method=method, headers=headers)
        try:
            with self._opener.open(req, timeout=self.timeout) as resp:
                return resp.status, resp.headers, resp.read()
        except urlerror.HTTPError as exc:
            try:
                raw = exc.read()
            except (OSError, http.client.HTTPException):
                raw = b""
            finally:
                exc.close()
            return exc.code, exc.headers, raw
        except urlerror.URLError as exc:
            if isinstance(exc.reason, (socket.timeout, TimeoutError)):
                raise EvalgateError(f"{method} {url} timed out after {self.timeout:g}s (--timeout)") from None
            raise EvalgateError(f"could not reach {url}: {_reason_text(exc.reason)}") from None
        except (socket.timeout, TimeoutError):  # noqa: UP041 - distinct classes on 3.9
            raise EvalgateError(f"{method} {url} timed out after {self.timeout:g}s (--timeout)") from None
        except (OSError, http.client.HTTPException) as exc:
            raise EvalgateError(f"{method} {url} failed: {_reason_text(exc)}") from None


def _reason_text(reason) -> str:
    if isinstance(reason, ConnectionRefusedError):
        return "connection refused (is the server running, and is the URL right?)"
    if isinstance(reason, OSError) and reason.strerror:
        return reason.strerror
    return str(reason) or type(reason).__name__


def _retry_after_seconds(value: str | None) -> float | None:
    """Retry-After as seconds: delta-seconds or an HTTP date (RFC 9110); None if unreadable."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):  # 3.9 raises TypeError on garbage, later versions ValueError
            return None
        if when is None:
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - datetime.now(UTC)).total_seconds()
    if not math.isfinite(seconds):
        return None
    return max(0.0, seconds)


def _json_body(method: str, url: str, status: int, raw: bytes) -> Any:
    if not raw.strip():
        return None
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise EvalgateError(f"{method} {url} answered {status} with a body that is not JSON: {_snippet(raw)}") from None


def _snippet(raw: bytes, limit: int = 200) -> str:
    text = " ".join(raw.decode("utf-8", "replace").split())
    return repr(text[:limit] + ("..." if len(text) > limit else ""))


def _api_error(method: str, url: str, status: int, raw: bytes) -> ApiError:
    try:
        problem = json.loads(raw.decode("utf-8")) if raw.strip() else None
    except (UnicodeDecodeError, ValueError):
        problem = None
    reason = http.client.responses.get(status, "")
    if isinstance(problem, dict):
        title = problem.get("title") or reason
        detail = problem.get("detail") or problem.get("message")  # GitHub's and GitLab's errors
        message = f"{method} {url} answered {status} {title}" + (f": {detail}" if detail else "")
        return ApiError(message, status=status, problem=problem, details=problem_details(problem))
    body = f": {_snippet(raw)}" if raw.strip() else ""
    return ApiError(f"{method} {url} answered {status} {reason}{body}", status=status)


def problem_details(problem: dict, label=None) -> list[str]:
    """``field: message`` for each item of a problem's ``errors``.

    ``label(field)`` may return extra context for a field (upload names the input line).
    """
    lines = []
    for item in problem.get("errors") or []:
        if not isinstance(item, dict):
            lines.append(str(item))
            continue
        field = item.get("field") or "(request)"
        line = f"{field}: {item.get('message', '')}"
        extra = label(field) if label else None
        lines.append(f"{line} ({extra})" if extra else line)
    return lines


def _setting(value: str | None, env: str, flag: str) -> str:
    value = value or os.environ.get(env)
    if not value:
        raise EvalgateError(f"no {flag[2:]} given: pass {flag} or set {env}")
    return value


def client_for(
    url: str | None = None,
    key: str | None = None,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    max_wait: float = DEFAULT_MAX_WAIT,
) -> Client:
    """A Client for ``url`` and ``key``, defaulting to ``EVALSITE_URL`` and ``EVALSITE_API_KEY``."""
    return Client(
        _setting(url, "EVALSITE_URL", "--url"),
        _setting(key, "EVALSITE_API_KEY", "--key"),
        timeout=timeout,
        budget=WaitBudget(max_wait),
    )
