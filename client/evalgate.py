"""evalgate: the evalsite command for CI, and a tracing helper for agents.

One stdlib-only file that runs on Python 3.9+, so CI can copy it alone:

    python evalgate.py cases  --dataset D [--output FILE]
    python evalgate.py upload --experiment E runs.jsonl
    python evalgate.py gate   --dataset D --experiment E [--baseline B] [--set-baseline]
                              [--junit FILE] [--summary FILE]

The contract (docs/evalgate.md is the long form, docs/gate.md the server's answer):

- The server is named by ``--url`` or ``EVALSITE_URL``, the project key by ``--key`` or
  ``EVALSITE_API_KEY``; every request sends ``Authorization: Bearer <key>``. Redirects
  are never followed, so the key only ever goes to the configured server.
- Exit codes: 0 PASS (or the command did its job), 1 FAIL, 2 could not decide (server
  unreachable or timed out, an error answer, an answer evalgate cannot read, bad input,
  or a bug in evalgate). A 1 always means the gate said FAIL; nothing else returns 1.
- ``gate`` prints ``GATE: PASS (p/t)`` or ``GATE: FAIL (p/t)``, then one line per case
  in the server's order, ``f"  {name:38} {PASS|FAIL}"``, a failure followed by
  ``  -- `` and the evidence of its failed checks. These 1 + N lines are a stable format
  that CI logs and scripts read; what follows them is for people.
- 429 answers are retried after ``Retry-After``; every wait (and gate polling) counts
  against ``--max-wait`` so a CI job never hangs.
- ``Tracer`` records agent runs as the ``POST /v1/api/traces`` payload (ARCHITECTURE
  section 9), uploads them in batches like ``upload``, or writes them as JSONL.
"""

from __future__ import annotations

import argparse
import email.utils
import http.client
import itertools
import json
import math
import os
import re
import socket
import sys
import time
import traceback
import uuid
import xml.etree.ElementTree as ET
from datetime import datetime, timedelta, timezone
from typing import Any
from urllib import error as urlerror
from urllib import parse as urlparse
from urllib import request as urlrequest

__version__ = "1.0.0"

__all__ = [
    "ApiError",
    "Client",
    "EvalgateError",
    "Run",
    "Span",
    "Tracer",
    "WaitBudget",
    "case_evidence",
    "case_line",
    "fetch_cases",
    "format_markdown",
    "format_verdict",
    "junit_xml",
    "main",
    "read_runs",
    "request_gate",
    "upload_runs",
]

EXIT_PASS = 0
EXIT_FAIL = 1
EXIT_UNDECIDED = 2

JSON = "application/json"
MAX_BATCH = 500  # runs per POST /v1/api/traces (the server accepts up to EVALSITE_MAX_BATCH, 1000 by default)
DEFAULT_TIMEOUT = 60.0
DEFAULT_MAX_WAIT = 300.0
DEFAULT_POLL_INTERVAL = 2.0
NAME_WIDTH = 38  # the seed's column: f"  {name:38} {status}"
MARKDOWN_MAX_ROWS = 500  # a step summary is capped at 1 MiB; JUnit and the log keep every case
MARKDOWN_MAX_FAILURES = 100

# datetime.UTC only exists from 3.11; this file must run on 3.9.
UTC = timezone.utc  # noqa: UP017

SPAN_KINDS = ("llm", "tool", "retrieval", "agent", "other")
PENDING_STATUSES = ("queued", "pending", "running")


class EvalgateError(Exception):
    """Something stopped a command from finishing; the command line exits 2 for it."""

    def __init__(self, message: str, details: list[str] | None = None):
        super().__init__(message)
        self.message = message
        self.details = list(details or [])


class ApiError(EvalgateError):
    """The server answered an HTTP error. ``problem`` is its problem+json body, if any."""

    def __init__(self, message: str, *, status: int, problem: dict | None = None, details: list[str] | None = None):
        super().__init__(message, details)
        self.status = status
        self.problem = problem


# --------------------------------------------------------------------------- HTTP


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
    429 is retried after Retry-After within the WaitBudget.
    """

    def __init__(self, url: str, key: str, *, timeout: float = DEFAULT_TIMEOUT, budget: WaitBudget | None = None):
        self.base = base_url(url)
        self.key = key
        self.timeout = float(timeout)
        self.budget = budget or WaitBudget()
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
        self, method: str, url: str, body: Any = None, *, raw_body: bytes | None = None, content_type: str = JSON
    ) -> tuple[int, Any]:
        """Send ``body`` as JSON (or ``raw_body`` as ``content_type``); the answer's JSON."""
        data = raw_body if raw_body is not None else (None if body is None else json.dumps(body).encode("utf-8"))
        backoff = 1.0
        while True:
            status, headers, raw = self._send(method, url, data, content_type)
            if status != 429:
                break
            wait = _retry_after_seconds(headers.get("Retry-After"))
            if wait is None:
                wait, backoff = backoff, min(backoff * 2, 30.0)
            self.budget.wait(wait, f"{method} {url} answered 429 Too Many Requests")
        if 300 <= status < 400:
            raise EvalgateError(
                f"{method} {url} answered {status}, a redirect to {headers.get('Location') or '(no Location)'}; "
                "set --url / EVALSITE_URL to the address the server answers on "
                "(evalgate does not follow redirects, so the key is only sent to the server you name)"
            )
        if status >= 400 or status < 200:
            raise _api_error(method, url, status, raw)
        return status, _json_body(method, url, status, raw)

    def _send(self, method: str, url: str, data: bytes | None, content_type: str = JSON):
        headers = {
            "Accept": "application/json",
            "Authorization": f"Bearer {self.key}",
            "User-Agent": f"evalgate/{__version__}",
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
        detail = problem.get("detail")
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


# ----------------------------------------------------------------------- commands


def fetch_cases(client: Client, dataset: str) -> list[dict]:
    """Every active case of ``dataset``, following ``next`` links until there is none."""
    url = client.url(f"datasets/{urlparse.quote(dataset, safe='')}/cases")
    seen = set()
    cases: list[dict] = []
    while url:
        if url in seen:
            raise EvalgateError(f"pagination loops: {url} was already read")
        seen.add(url)
        _, body = client.request("GET", url)
        if isinstance(body, list):  # an unpaginated list is the same cases, all at once
            cases.extend(body)
            break
        if not isinstance(body, dict) or not isinstance(body.get("results"), list):
            raise EvalgateError(f"GET {url} did not answer a page of cases ({{next, results}})")
        cases.extend(body["results"])
        link = body.get("next")
        url = client.follow(link, url) if link else None
    return cases


def cases_import(client: Client, dataset: str, body: bytes, *, create: bool = True) -> dict:
    """Import a JSONL golden set into ``dataset`` (all or nothing); create the dataset first if missing.

    Returns the server's answer (``created``, ``updated``, ``unchanged`` counts). Cases
    already in the dataset are updated by name, so importing the same file twice
    changes nothing: a golden set can live in the repository next to the code.
    """
    quoted = urlparse.quote(dataset, safe="")
    if create:
        try:
            client.request("GET", client.url(f"datasets/{quoted}"))
        except ApiError as exc:
            if exc.status != 404:
                raise
            client.request("POST", client.url("datasets"), {"name": dataset})
    _, answer = client.request(
        "POST", client.url(f"datasets/{quoted}/import"), raw_body=body, content_type="application/jsonl"
    )
    return answer


def read_runs(stream, source: str = "<stdin>") -> tuple[list[dict], list[str]]:
    """Runs from JSONL, one object a line (blank lines skipped), and where each came from.

    The whole input is read before anything is sent, so a broken line is reported
    before any batch reaches the server.
    """
    runs, origins = [], []
    for number, line in enumerate(stream, start=1):
        if not line.strip():
            continue
        try:
            run = json.loads(line)
        except ValueError as exc:
            raise EvalgateError(f"{source} line {number} is not valid JSON: {exc}") from None
        if not isinstance(run, dict):
            raise EvalgateError(f"{source} line {number} is not a JSON object (one run per line)")
        runs.append(run)
        origins.append(f"{source} line {number}")
    return runs, origins


def upload_runs(
    client: Client,
    runs: list[dict],
    *,
    experiment: str | None = None,
    batch_size: int = MAX_BATCH,
    origins: list[str] | None = None,
) -> dict:
    """POST ``runs`` in batches; returns ``{"runs", "created", "unchanged"}`` summed.

    ``experiment`` is set on runs that have none (the input is not modified). Safe to
    repeat: the server stores identical runs once and reports them ``unchanged``.
    """
    if not 1 <= batch_size <= MAX_BATCH:
        raise EvalgateError(f"batch size must be between 1 and {MAX_BATCH}, got {batch_size}")
    totals = {"runs": 0, "created": 0, "unchanged": 0}
    url = client.url("traces")
    for start in range(0, len(runs), batch_size):
        batch = runs[start : start + batch_size]
        if experiment:
            batch = [run if run.get("experiment") else {**run, "experiment": experiment} for run in batch]
        try:
            _, body = client.request("POST", url, {"traces": batch})
        except ApiError as exc:
            if exc.problem is not None:
                exc.details = problem_details(exc.problem, _batch_labeler(batch, start, origins))
            if exc.status == 413:
                exc.details.append(
                    f"the batch of {len(batch)} runs is over the server's body limit: lower --batch-size"
                )
            if start:
                exc.details.append(f"the {start} runs before this batch were stored; uploading them again is a no-op")
            raise
        if not isinstance(body, dict):
            raise EvalgateError(f"POST {url} answered without the {{created, unchanged}} counts")
        totals["runs"] += len(batch)
        totals["created"] += int(body.get("created") or 0)
        totals["unchanged"] += int(body.get("unchanged") or 0)
    return totals


def _batch_labeler(batch: list[dict], start: int, origins: list[str] | None):
    def label(field: str) -> str | None:
        match = re.match(r"traces\[(\d+)\]", field)
        if not match or int(match.group(1)) >= len(batch):
            return None
        index = int(match.group(1))
        if origins and start + index < len(origins):
            return origins[start + index]
        return f"trace_id {batch[index].get('trace_id')!r}"

    return label


def request_gate(
    client: Client,
    *,
    dataset: str,
    experiment: str,
    baseline: str | None = None,
    set_baseline: bool = False,
    poll_interval: float = DEFAULT_POLL_INTERVAL,
) -> dict:
    """Ask for the verdict; poll a 202's gate run until it is done. Returns the verdict body.

    Raises EvalgateError when no verdict could be had (error answers, a failed gate run,
    the wait budget spent, or an answer that is not a verdict).
    """
    payload: dict[str, Any] = {"dataset": dataset, "experiment": experiment}
    if baseline:
        payload["baseline"] = baseline
    payload["set_baseline"] = bool(set_baseline)
    status, answer = client.request("POST", client.url("gate"), payload)
    run_id = None
    while True:
        if not isinstance(answer, dict):
            raise EvalgateError(f"the gate answered something that is not a JSON object: {answer!r:.200}")
        run_id = answer.get("gate_run_id", run_id)
        state = answer.get("status")
        if state is None:
            state = "running" if status == 202 else "done"
        if state == "done":
            return _verdict_checked(answer)
        if state == "failed":
            reason = answer.get("error") or answer.get("detail") or "no reason given"
            raise EvalgateError(f"gate run {run_id} failed on the server: {reason}")
        if state not in PENDING_STATUSES:
            raise EvalgateError(f"gate run {run_id} has an unknown status {state!r}")
        if run_id is None:
            raise EvalgateError("the gate is running but the answer names no gate_run_id to poll")
        poll_url = client.url(f"gate-runs/{urlparse.quote(str(run_id), safe='')}")
        client.budget.wait(
            poll_interval, f"gate run {run_id} is still {state} (read it later at {poll_url})", partial=True
        )
        status, answer = client.request("GET", poll_url)


def _verdict_checked(answer: dict) -> dict:
    if answer.get("verdict") not in ("PASS", "FAIL"):
        raise EvalgateError(f"the gate answer has no verdict PASS or FAIL (verdict={answer.get('verdict')!r})")
    cases = answer.get("cases")
    if not isinstance(cases, list) or not all(isinstance(c, dict) for c in cases):
        raise EvalgateError("the gate answer has no list of cases")
    return answer


# ---------------------------------------------------------------------- rendering


def _passed(case: dict) -> bool:
    return case.get("passed") is True


def _measured(case: dict) -> bool:
    return case.get("measured") is not False


def _no_run(case: dict) -> bool:
    return "trace_id" in case and case["trace_id"] is None


def case_evidence(case: dict) -> list[str]:
    """The evidence of a failed case, one item per failed check, in a fixed order.

    First the seed's fields: ``tool_choice_ok=False actual_tools=[...]``,
    ``schema_errors=[...]``, ``output_errors=[...]``, ``cost_ok=False cost_cents=...``,
    ``latency_ok=False latency_ms=...``; then ``scorer=reason`` for every other failed or
    abstained check, in the server's order. A schema or output check that abstained
    because the wrong tool was called is left out: tool_choice already says why. A case
    with no run, or whose failure no check explains, shows ``error=<its reasons>``.
    """
    reasons = [str(r) for r in case.get("reasons") or []]
    if _no_run(case):
        return ["error=" + ("; ".join(reasons) or "no run recorded for this case")]
    parts = []
    shown = set()
    if case.get("tool_choice_ok") is False:
        actual_tools = case.get("actual_tools") or []
        parts.append(f"tool_choice_ok=False actual_tools={actual_tools!r}")
        shown.add("tool_choice")
    if case.get("schema_errors"):
        parts.append(f"schema_errors={case['schema_errors']!r}")
        shown.add("tool_output_schema")
    if case.get("output_errors"):
        parts.append(f"output_errors={case['output_errors']!r}")
        shown.add("tool_output")
    if case.get("cost_ok") is False:
        parts.append(f"cost_ok=False cost_cents={case.get('cost_cents')!r}")
        shown.add("cost_budget")
    if case.get("latency_ok") is False:
        parts.append(f"latency_ok=False latency_ms={case.get('latency_ms')!r}")
        shown.add("latency_budget")
    wrong_tool = case.get("tool_choice_ok") is False
    for check in case.get("checks") or []:
        if not isinstance(check, dict):
            continue
        status = check.get("status")
        scorer = str(check.get("scorer") or "check")
        if status not in ("failed", "abstained") or scorer in shown:
            continue
        if wrong_tool and status == "abstained" and scorer in ("tool_output_schema", "tool_output"):
            continue
        parts.append(f"{scorer}={check.get('reason') or status}")
    if not parts:
        parts.append("error=" + ("; ".join(reasons) or "the server gave no reason"))
    return parts


def case_line(case: dict) -> str:
    """One case as the seed prints it; a failure carries ``  -- <evidence>``."""
    name = str(case.get("name", "?"))
    if _passed(case):
        return f"  {name:{NAME_WIDTH}} PASS"
    return f"  {name:{NAME_WIDTH}} FAIL  -- " + " ".join(case_evidence(case))


def _counts(gate: dict) -> tuple[int, int]:
    cases = gate.get("cases") or []
    passed = gate.get("passed_cases")
    total = gate.get("total_cases")
    if passed is None:
        passed = sum(1 for c in cases if _passed(c))
    if total is None:
        total = len(cases)
    return passed, total


def _fixed(value) -> str:
    try:
        return f"{float(value):.3f}"
    except (TypeError, ValueError):
        return "n/a"


def _signed(value) -> str:
    try:
        return f"{float(value):+.3f}" if float(value) else "0.000"
    except (TypeError, ValueError):
        return "n/a"


def _baseline(gate: dict) -> tuple[str | None, Any]:
    baseline = gate.get("baseline")
    if isinstance(baseline, dict) and baseline.get("experiment"):
        return str(baseline["experiment"]), baseline.get("pass_rate")
    if isinstance(baseline, str) and baseline:
        return baseline, None
    return None, None


def figures_line(gate: dict, sep: str = "  ") -> str:
    """``floor: 1.000  pass rate: 0.800  baseline v1: 1.000  delta: -0.200``."""
    parts = [f"floor: {_fixed(gate.get('floor'))}", f"pass rate: {_fixed(gate.get('pass_rate'))}"]
    name, rate = _baseline(gate)
    if name is None:
        parts.append("baseline: none")
    else:
        parts += [f"baseline {name}: {_fixed(rate)}", f"delta: {_signed(gate.get('delta'))}"]
    return sep.join(parts)


def format_verdict(gate: dict) -> str:
    """The text ``evalgate gate`` prints: the seed's 1 + N lines, then figures and reasons."""
    cases = gate.get("cases") or []
    passed, total = _counts(gate)
    lines = [f"GATE: {gate.get('verdict')} ({passed}/{total})"]
    lines += [case_line(case) for case in cases]
    lines += ["", figures_line(gate)]
    lines += [f"blocked by: {item}" for item in gate.get("blocked_by") or []]
    if gate.get("unmeasured_cases"):
        lines.append(f"unmeasured cases: {gate['unmeasured_cases']} (allowed: {gate.get('max_abstained', 0)})")
    if gate.get("gate_run_id") is not None:
        lines.append(f"gate run: {gate['gate_run_id']}")
    failed = [case for case in cases if not _passed(case)]
    if failed:
        lines += ["", "Failures:"]
        for case in failed:
            lines.append(f"  {case.get('name', '?')}" + ("" if _measured(case) else " (not measured)"))
            lines += [f"    {reason}" for reason in case.get("reasons") or ["(the server gave no reason)"]]
    return "\n".join(lines)


# JUnit ---------------------------------------------------------------------------

_XML_INVALID = re.compile("[^\x09\x0a\x0d\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _xml(value: Any) -> str:
    """Text safe for XML 1.0: ElementTree escapes markup but writes control characters as is."""
    return _XML_INVALID.sub(lambda m: f"\\x{ord(m.group()):02x}", str(value))


def _seconds(latency_ms) -> str:
    try:
        return f"{max(float(latency_ms), 0.0) / 1000:.3f}"
    except (TypeError, ValueError):
        return "0.000"


def _case_report(case: dict) -> str:
    """The body of a JUnit failure: evidence, reasons and every check, for a reader in a CI UI."""
    lines = [" ".join(case_evidence(case)), ""]
    lines += [str(r) for r in case.get("reasons") or []]
    checks = [c for c in case.get("checks") or [] if isinstance(c, dict)]
    if checks:
        lines += ["", "checks:"]
        for check in checks:
            reason = check.get("reason")
            lines.append(f"  {check.get('scorer')}: {check.get('status')}" + (f" ({reason})" if reason else ""))
    if case.get("trace_id"):
        lines += ["", f"trace: {case['trace_id']}"]
    return "\n".join(lines)


def junit_xml(gate: dict) -> ET.Element:
    """``<testsuites>`` with one suite for the dataset and one testcase per case.

    A failed case gets ``<failure>``; one that could not be measured (a gating check
    abstained, or no run) gets ``<error>``. A FAIL that no case explains (a regression
    against the baseline) adds a ``gate verdict`` testcase, so a red build always shows
    a red test.
    """
    dataset = str(gate.get("dataset") or "")
    cases = gate.get("cases") or []
    suite = ET.Element("testsuite", {"name": _xml(f"evalsite gate: {dataset}")})
    name, rate = _baseline(gate)
    properties = [
        (key, value)
        for key, value in (
            ("verdict", gate.get("verdict")),
            ("experiment", gate.get("experiment")),
            ("baseline", name),
            ("baseline_pass_rate", rate),
            ("pass_rate", gate.get("pass_rate")),
            ("floor", gate.get("floor")),
            ("delta", gate.get("delta")),
            ("gate_run_id", gate.get("gate_run_id")),
        )
        if value is not None
    ]
    if properties:  # the JUnit schema wants at least one <property> in <properties>
        props = ET.SubElement(suite, "properties")
        for key, value in properties:
            ET.SubElement(props, "property", {"name": key, "value": _xml(value)})
    failures = errors = 0
    total_time = 0.0
    for case in cases:
        seconds = _seconds(case.get("latency_ms"))
        total_time += float(seconds)
        testcase = ET.SubElement(
            suite,
            "testcase",
            {"classname": _xml(f"evalsite.{dataset}"), "name": _xml(case.get("name", "?")), "time": seconds},
        )
        if _passed(case):
            continue
        evidence = " ".join(case_evidence(case))
        kind = ",".join(str(c) for c in case.get("failed_checks") or []) or "gate"
        if _measured(case):
            failures += 1
            element = ET.SubElement(testcase, "failure", {"message": _xml(evidence), "type": _xml(kind)})
        else:
            errors += 1
            element = ET.SubElement(testcase, "error", {"message": _xml(evidence), "type": _xml(kind)})
        element.text = _xml(_case_report(case))
    tests = len(cases)
    if gate.get("verdict") == "FAIL" and not failures and not errors:
        blocked = "; ".join(str(b) for b in gate.get("blocked_by") or []) or "the gate said FAIL"
        testcase = ET.SubElement(
            suite, "testcase", {"classname": _xml(f"evalsite.{dataset}"), "name": "gate verdict", "time": "0.000"}
        )
        ET.SubElement(testcase, "failure", {"message": _xml(blocked), "type": "verdict"}).text = _xml(blocked)
        tests += 1
        failures += 1
    out = ET.SubElement(suite, "system-out")
    out.text = _xml(format_verdict(gate))
    counts = {"tests": str(tests), "failures": str(failures), "errors": str(errors), "skipped": "0"}
    suite.attrib.update({**counts, "time": f"{total_time:.3f}"})
    root = ET.Element("testsuites", {"name": "evalsite", **counts, "time": f"{total_time:.3f}"})
    root.append(suite)
    return root


def _undecided_junit(dataset: str, message: str) -> ET.Element:
    suite = ET.Element(
        "testsuite",
        {"name": _xml(f"evalsite gate: {dataset}"), "tests": "1", "failures": "0", "errors": "1", "skipped": "0"},
    )
    testcase = ET.SubElement(
        suite, "testcase", {"classname": _xml(f"evalsite.{dataset}"), "name": "gate verdict", "time": "0.000"}
    )
    ET.SubElement(testcase, "error", {"message": _xml(message), "type": "undecided"}).text = _xml(message)
    root = ET.Element("testsuites", {"name": "evalsite", "tests": "1", "failures": "0", "errors": "1"})
    root.append(suite)
    return root


def write_junit(root: ET.Element, path: str) -> None:
    _ensure_parent(path)
    ET.indent(root)
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)


# Markdown ------------------------------------------------------------------------

_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|&~#])")


def _md_text(value: Any) -> str:
    """Plain text for Markdown: punctuation that could become markup is escaped."""
    return _MD_SPECIAL.sub(r"\\\1", " ".join(str(value).split()))


def _md_code(value: Any) -> str:
    """A code span for a table cell: one line, ``|`` escaped (GFM splits cells first)."""
    text = " ".join(str(value).split()).replace("|", "\\|")
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def format_markdown(gate: dict) -> str:
    """A Markdown report for ``$GITHUB_STEP_SUMMARY``: verdict, figures, cases (failures first), reasons."""
    cases = gate.get("cases") or []
    passed, total = _counts(gate)
    verdict = gate.get("verdict")
    icon = "\u2705" if verdict == "PASS" else "\u274c"
    lines = [
        f"## {icon} evalsite gate: {verdict} ({passed}/{total})",
        "",
        f"Dataset {_md_code(gate.get('dataset', ''))}, experiment {_md_code(gate.get('experiment', ''))}.",
        "",
        _md_text(figures_line(gate, sep=" \u00b7 ")),
        "",
    ]
    blocked = gate.get("blocked_by") or []
    if blocked:
        lines += [f"- blocked by: {_md_text(item)}" for item in blocked] + [""]
    ordered = [c for c in cases if not _passed(c)] + [c for c in cases if _passed(c)]
    lines += ["| case | result | evidence |", "|---|---|---|"]
    for case in ordered[:MARKDOWN_MAX_ROWS]:
        if _passed(case):
            result, evidence = "PASS", ""
        else:
            result = "FAIL" if _measured(case) else "FAIL (not measured)"
            evidence = _md_code(" ".join(case_evidence(case)))
        lines.append(f"| {_md_code(case.get('name', '?'))} | {result} | {evidence} |")
    if len(ordered) > MARKDOWN_MAX_ROWS:
        lines.append(
            f"\n{len(ordered) - MARKDOWN_MAX_ROWS} more cases are not shown; the log and JUnit report list all."
        )
    failed = [c for c in cases if not _passed(c)]
    if failed:
        lines += ["", "### Failures", ""]
        for case in failed[:MARKDOWN_MAX_FAILURES]:
            lines.append(f"- **{_md_text(case.get('name', '?'))}**")
            lines += [f"  - {_md_text(reason)}" for reason in case.get("reasons") or ["(the server gave no reason)"]]
        if len(failed) > MARKDOWN_MAX_FAILURES:
            lines.append(f"\n{len(failed) - MARKDOWN_MAX_FAILURES} more failed cases are listed in the log.")
    if gate.get("gate_run_id") is not None:
        lines += ["", f"Gate run {_md_text(gate['gate_run_id'])}."]
    return "\n".join(lines) + "\n\n"


def _undecided_markdown(dataset: str, experiment: str, error: EvalgateError) -> str:
    body = "\n".join([error.message, *error.details])
    fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", body)), default=0))
    return (
        f"## \u26a0\ufe0f evalsite gate: could not decide\n\n"
        f"Dataset {_md_code(dataset)}, experiment {_md_code(experiment)}.\n\n"
        f"{fence}text\n{body}\n{fence}\n\n"
    )


def _ensure_parent(path: str) -> None:
    parent = os.path.dirname(os.path.abspath(path))
    os.makedirs(parent, exist_ok=True)


def append_markdown(text: str, path: str) -> None:
    _ensure_parent(path)
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(text)


# ------------------------------------------------------------------------ tracing


def _as_datetime(value: Any) -> datetime:
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, str):
        text = value[:-1] + "+00:00" if value.endswith(("Z", "z")) else value
        try:
            parsed = datetime.fromisoformat(text)
        except ValueError:
            raise ValueError(f"not an RFC 3339 timestamp: {value!r}") from None
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    raise TypeError(f"a timestamp must be a datetime or an RFC 3339 string, got {type(value).__name__}")


def rfc3339(value: Any) -> str:
    """UTC with a ``Z``; milliseconds only when there are some (``2026-11-30T10:00:00Z``)."""
    moment = _as_datetime(value).astimezone(UTC)
    millis = moment.microsecond // 1000
    return moment.strftime("%Y-%m-%dT%H:%M:%S") + (f".{millis:03d}" if millis else "") + "Z"


def _error_text(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class _Timed:
    """Start, end and latency, measured unless the caller set them.

    Explicit values win, so a scripted agent that sets ``started_at`` and
    ``latency_ms`` produces the same payload on every run. A missing end is the start
    plus the latency, which keeps the three consistent.
    """

    started_at: Any = None
    ended_at: Any = None
    latency_ms: Any = None
    _wall_start: datetime | None = None
    _perf_start = 0.0
    _measured_ms = 0.0

    def _clock_start(self) -> None:
        self._wall_start = datetime.now(UTC)
        self._perf_start = time.perf_counter()  # monotonic: a wall-clock jump cannot make latency negative

    def _clock_stop(self) -> None:
        self._measured_ms = (time.perf_counter() - self._perf_start) * 1000

    def _timing(self) -> dict:
        started = _as_datetime(self.started_at if self.started_at is not None else self._wall_start)
        if self.latency_ms is not None:
            latency = int(round(float(self.latency_ms)))  # the contract's latency_ms is an integer
        elif self.started_at is not None and self.ended_at is not None:
            latency = int(round((_as_datetime(self.ended_at) - started).total_seconds() * 1000))
        else:
            latency = int(round(self._measured_ms))
        ended = self.ended_at if self.ended_at is not None else started + timedelta(milliseconds=latency)
        return {"started_at": rfc3339(started), "ended_at": rfc3339(ended), "latency_ms": latency}


class Span(_Timed):
    """One step of a run (an LLM call, a tool call, ...). Use it as a context manager.

    Set ``output`` (and optionally ``cost_cents``, ``model``, ``usage``,
    ``attributes``, ``latency_ms``, ``started_at``) inside the block. An exception
    escaping the block marks the span ``status="error"`` with its text, and is re-raised.
    """

    def __init__(
        self,
        run: Run,
        kind: str,
        name: str,
        *,
        input: Any = None,
        parent: Any = ...,
        span_id: str | None = None,
        model: str | None = None,
        usage: dict | None = None,
        attributes: dict | None = None,
        cost_cents: Any = None,
        latency_ms: Any = None,
        started_at: Any = None,
        ended_at: Any = None,
    ):
        if kind not in SPAN_KINDS:
            raise ValueError(f"span kind must be one of {', '.join(SPAN_KINDS)}, got {kind!r}")
        self.run = run
        self.kind = kind
        self.name = name
        self.input = input
        self.output: Any = None
        self.status: str | None = None
        self.error: str | None = None
        self.span_id = span_id
        self.parent_id: str | None = None
        self._parent = parent
        self.model = model
        self.usage = usage
        self.attributes = dict(attributes or {})
        self.cost_cents = cost_cents
        self.latency_ms = latency_ms
        self.started_at = started_at
        self.ended_at = ended_at

    def span(self, kind: str, name: str, **fields) -> Span:
        """A child of this span, whatever else is open."""
        return self.run.span(kind, name, parent=self, **fields)

    def __enter__(self) -> Span:
        self.run._span_open(self)
        self._clock_start()
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        self._clock_stop()
        if exc is not None:
            self.status = "error"
            self.error = _error_text(exc)
        self.run._span_close(self)
        return False

    def payload(self) -> dict:
        body = {
            "span_id": self.span_id,
            "parent_id": self.parent_id,
            "kind": self.kind,
            "name": self.name,
            "input": self.input,
            "output": self.output,
            "status": self.status or ("error" if self.error else "ok"),
            "error": self.error,
            **self._timing(),
        }
        if self.cost_cents is not None:
            body["cost_cents"] = self.cost_cents
        if self.model is not None:
            body["model"] = self.model
        if self.usage is not None:
            body["usage"] = self.usage
        body["attributes"] = self.attributes
        return body


class Run(_Timed):
    """One agent run. Use it as a context manager; on exit its payload joins ``tracer.runs``.

    Set ``output`` (the final answer) and optionally ``cost_cents``, ``metadata``,
    ``tags``, ``latency_ms``, ``started_at`` inside the block. An exception escaping it
    records the run with ``status="error"`` and its text (failed runs are the ones worth
    keeping), then is re-raised.
    """

    def __init__(
        self,
        tracer: Tracer,
        trace_id: str,
        *,
        name: str,
        input: Any = None,
        case: Any = None,
        dataset: str | None = None,
        experiment: str | None = None,
        metadata: dict | None = None,
        tags: list | None = None,
        cost_cents: Any = None,
        latency_ms: Any = None,
        started_at: Any = None,
        ended_at: Any = None,
    ):
        self.tracer = tracer
        self.trace_id = trace_id
        self.name = name
        self.input = input
        self.case = case
        self.dataset = dataset
        self.experiment = experiment
        self.metadata = dict(metadata or {})
        self.tags = list(tags or [])
        self.output: Any = None
        self.status: str | None = None
        self.error: str | None = None
        self.cost_cents = cost_cents
        self.latency_ms = latency_ms
        self.started_at = started_at
        self.ended_at = ended_at
        self.spans: list[Span] = []
        self._open: list[Span] = []
        self._ids = itertools.count(1)
        self._done = False

    def span(self, kind: str, name: str, **fields) -> Span:
        """A span; started by ``with``. Its parent is the innermost span open at that moment."""
        return Span(self, kind, name, **fields)

    def add_span(self, kind: str, name: str, *, output: Any = None, error: str | None = None, **fields) -> Span:
        """Record a step that already happened (a replayed tool call), with explicit figures."""
        with self.span(kind, name, **fields) as span:
            span.output = output
            if error is not None:
                span.status, span.error = "error", error
        return span

    def _span_open(self, span: Span) -> None:
        if span.span_id is None:
            # A counter rather than uuid4: a scripted run then has the same ids every
            # time, so uploading it again is a no-op instead of a 409.
            span.span_id = f"s{next(self._ids)}"
        parent = span._parent
        if parent is ...:
            span.parent_id = self._open[-1].span_id if self._open else None
        else:
            span.parent_id = parent.span_id if isinstance(parent, Span) else parent
        self._open.append(span)
        self.spans.append(span)

    def _span_close(self, span: Span) -> None:
        if span in self._open:
            self._open.remove(span)

    def __enter__(self) -> Run:
        if self._done:
            raise RuntimeError(f"run {self.trace_id!r} was already recorded")
        self._clock_start()
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        self._clock_stop()
        if exc is not None:
            self.status = "error"
            self.error = _error_text(exc)
        self._done = True
        self.tracer.runs.append(self.payload())
        return False

    def payload(self) -> dict:
        body: dict[str, Any] = {"trace_id": self.trace_id, "name": self.name}
        if self.experiment is not None:
            body["experiment"] = self.experiment
        if self.dataset is not None:
            body["dataset"] = self.dataset
        if self.case is not None:
            body["case"] = self.case
        body.update(
            {
                "input": self.input,
                "output": self.output,
                "status": self.status or ("error" if self.error else "ok"),
                "error": self.error,
                **self._timing(),
            }
        )
        if self.cost_cents is not None:
            body["cost_cents"] = self.cost_cents
        body.update({"metadata": self.metadata, "tags": self.tags, "spans": [s.payload() for s in self.spans]})
        return body


class Tracer:
    """Collects runs of an agent as ``POST /v1/api/traces`` payloads.

    ::

        tracer = Tracer(experiment="v2", dataset="reservo")
        with tracer.run("run-42", name="reservo", input=question, case="quote_focus_pro_3h") as run:
            with run.span("tool", "quote_room", input={"room": "Focus"}) as span:
                span.output = quote_room(...)
            run.output = answer
        tracer.upload()            # or tracer.write_jsonl("runs.jsonl")

    Spans nest by the order of ``with`` blocks in one thread; for steps running
    concurrently, pass ``parent=`` explicitly.
    """

    def __init__(
        self,
        experiment: str | None = None,
        dataset: str | None = None,
        *,
        name: str = "agent",
        metadata: dict | None = None,
        tags: list | None = None,
    ):
        self.experiment = experiment
        self.dataset = dataset
        self.name = name
        self.metadata = dict(metadata or {})
        self.tags = list(tags or [])
        self.runs: list[dict] = []

    def run(
        self,
        trace_id: str | None = None,
        *,
        name: str | None = None,
        input: Any = None,
        case: Any = None,
        dataset: str | None = None,
        metadata: dict | None = None,
        tags: list | None = None,
        **fields,
    ) -> Run:
        """A run; ``trace_id`` defaults to a random one (give a stable one to make re-uploads no-ops)."""
        return Run(
            self,
            trace_id or uuid.uuid4().hex,
            name=name or self.name,
            input=input,
            case=case,
            dataset=dataset or self.dataset,
            experiment=self.experiment,
            metadata={**self.metadata, **(metadata or {})},
            tags=[*self.tags, *(tags or [])],
            **fields,
        )

    def write_jsonl(self, path) -> None:
        """One run per line, UTF-8; ``path`` may also be an open text file."""
        if hasattr(path, "write"):
            _write_jsonl(self.runs, path)
            return
        with open(path, "w", encoding="utf-8") as fh:
            _write_jsonl(self.runs, fh)

    def upload(
        self,
        url: str | None = None,
        key: str | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        batch_size: int = MAX_BATCH,
        max_wait: float = DEFAULT_MAX_WAIT,
    ) -> dict:
        """POST the runs like ``evalgate upload``; returns ``{"runs", "created", "unchanged"}``.

        ``url`` and ``key`` default to ``EVALSITE_URL`` and ``EVALSITE_API_KEY``. Raises
        EvalgateError (ApiError for an error answer) when the upload fails.
        """
        client = client_for(url, key, timeout=timeout, max_wait=max_wait)
        return upload_runs(client, self.runs, experiment=self.experiment, batch_size=batch_size)


def _write_jsonl(records, stream) -> None:
    # JSONL is UTF-8; on a console that cannot show it, \u escapes keep it valid JSON.
    encoding = (getattr(stream, "encoding", None) or "utf-8").lower().replace("-", "").replace("_", "")
    ascii_only = encoding != "utf8"
    for record in records:
        stream.write(json.dumps(record, ensure_ascii=ascii_only) + "\n")


# ---------------------------------------------------------------------------- CLI


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


def _client(args, max_wait: float = DEFAULT_MAX_WAIT) -> Client:
    return client_for(args.url, args.key, timeout=args.timeout, max_wait=max_wait)


def _cmd_cases(args) -> int:
    client = _client(args)
    cases = fetch_cases(client, args.dataset)
    if args.output and args.output != "-":
        _ensure_parent(args.output)
        partial = f"{args.output}.part"  # a reader never sees half a golden set
        with open(partial, "w", encoding="utf-8") as fh:
            _write_jsonl(cases, fh)
        os.replace(partial, args.output)
    else:
        _write_jsonl(cases, sys.stdout)
        sys.stdout.flush()
    print(f"fetched {len(cases)} cases of dataset {args.dataset}", file=sys.stderr)
    return EXIT_PASS


def _cmd_import(args) -> int:
    try:
        with open(args.cases, "rb") as fh:
            body = fh.read()
    except OSError as exc:
        raise EvalgateError(f"cannot read {args.cases}: {exc.strerror or exc}") from None
    answer = cases_import(_client(args), args.dataset, body, create=not args.no_create)
    counts = ", ".join(f"{answer[k]} {k}" for k in ("created", "updated", "unchanged") if k in answer)
    print(f"imported {args.cases} into dataset {args.dataset} ({counts})")
    return EXIT_PASS


def _cmd_upload(args) -> int:
    if args.runs == "-":
        if hasattr(sys.stdin, "buffer"):  # JSONL is UTF-8 whatever the locale says
            with open(sys.stdin.fileno(), encoding="utf-8", closefd=False) as fh:
                runs, origins = read_runs(fh, "<stdin>")
        else:
            runs, origins = read_runs(sys.stdin, "<stdin>")
    else:
        try:
            with open(args.runs, encoding="utf-8") as fh:
                runs, origins = read_runs(fh, args.runs)
        except OSError as exc:
            raise EvalgateError(f"cannot read {args.runs}: {exc.strerror or exc}") from None
    client = _client(args, args.max_wait)
    totals = upload_runs(client, runs, experiment=args.experiment, batch_size=args.batch_size, origins=origins)
    print(f"uploaded {totals['runs']} runs ({totals['created']} created, {totals['unchanged']} unchanged)")
    return EXIT_PASS


def _cmd_gate(args) -> int:
    try:
        client = _client(args, args.max_wait)
        verdict = request_gate(
            client,
            dataset=args.dataset,
            experiment=args.experiment,
            baseline=args.baseline,
            set_baseline=args.set_baseline,
            poll_interval=args.poll_interval,
        )
    except EvalgateError as exc:
        # CI still gets its reports: a test report that says why beats a missing one.
        message = "could not decide: " + "; ".join([exc.message, *exc.details])
        try:
            if args.junit:
                write_junit(_undecided_junit(args.dataset, message), args.junit)
            if args.summary:
                append_markdown(_undecided_markdown(args.dataset, args.experiment, exc), args.summary)
        except OSError as write_error:
            exc.details.append(f"could not write the report: {write_error}")
        raise
    print(format_verdict(verdict))
    sys.stdout.flush()
    try:
        if args.junit:
            write_junit(junit_xml(verdict), args.junit)
        if args.summary:
            append_markdown(format_markdown(verdict), args.summary)
    except OSError as exc:
        raise EvalgateError(f"the verdict is {verdict['verdict']}, but writing a report failed: {exc}") from None
    return EXIT_PASS if verdict["verdict"] == "PASS" else EXIT_FAIL


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text!r}")
    return value


def _non_negative(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"must be zero or more seconds, got {text!r}")
    return value


def _batch_size(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if not 1 <= value <= MAX_BATCH:
        raise argparse.ArgumentTypeError(f"must be between 1 and {MAX_BATCH}, got {value}")
    return value


def _connection_options(parser: argparse.ArgumentParser, default) -> None:
    parser.add_argument("--url", default=default, help="evalsite server (default: $EVALSITE_URL)")
    parser.add_argument(
        "--key", default=default, help="project API key (default: $EVALSITE_API_KEY; prefer the variable)"
    )
    parser.add_argument(
        "--timeout",
        type=_positive,
        default=DEFAULT_TIMEOUT if default is None else default,
        help=f"seconds per request before giving up (default: {DEFAULT_TIMEOUT:g})",
    )


_CASES_DOC = "GET /v1/api/datasets/D/cases, every page, written one JSON case per line."
_IMPORT_DOC = (
    "POST a JSONL golden set to /v1/api/datasets/D/import (all or nothing; cases are matched by name), "
    "creating the dataset first if it does not exist."
)
_UPLOAD_DOC = "POST the runs to /v1/api/traces in batches of at most 500; prints the created/unchanged counts."
_GATE_DOC = "POST /v1/api/gate and print the verdict. Exit 0 PASS, 1 FAIL, 2 could not decide."


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="evalgate",
        description="Fetch golden cases, upload agent runs and ask evalsite's gate for a verdict.",
        epilog="Exit codes: 0 PASS or done, 1 FAIL, 2 could not decide (errors).",
    )
    parser.add_argument("--version", action="version", version=f"evalgate {__version__}")
    _connection_options(parser, None)
    # The same options after the command name; SUPPRESS keeps a subcommand's absent
    # option from overwriting one given before it.
    common = argparse.ArgumentParser(add_help=False)
    _connection_options(common, argparse.SUPPRESS)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True

    cases = commands.add_parser(
        "cases", parents=[common], help="write a dataset's active cases as JSONL", description=_CASES_DOC
    )
    cases.add_argument("--dataset", required=True)
    cases.add_argument("--output", "-o", help="file to write (default: standard output)")
    cases.set_defaults(handler=_cmd_cases)

    importer = commands.add_parser(
        "import", parents=[common], help="import a JSONL golden set into a dataset", description=_IMPORT_DOC
    )
    importer.add_argument("cases", help="JSONL file, one case per line (the export format)")
    importer.add_argument("--dataset", required=True)
    importer.add_argument("--no-create", action="store_true", help="fail if the dataset does not exist")
    importer.set_defaults(handler=_cmd_import)

    upload = commands.add_parser("upload", parents=[common], help="upload runs from JSONL", description=_UPLOAD_DOC)
    upload.add_argument("runs", help="JSONL file, one run per line; - for standard input")
    upload.add_argument("--experiment", help="experiment set on runs that name none")
    upload.add_argument("--batch-size", type=_batch_size, default=MAX_BATCH, help=f"runs per request (max {MAX_BATCH})")
    upload.add_argument(
        "--max-wait",
        type=_non_negative,
        default=DEFAULT_MAX_WAIT,
        help="seconds to wait on 429s in total (default: 300)",
    )
    upload.set_defaults(handler=_cmd_upload)

    gate = commands.add_parser("gate", parents=[common], help="ask for the PASS/FAIL verdict", description=_GATE_DOC)
    gate.add_argument("--dataset", required=True)
    gate.add_argument("--experiment", required=True)
    gate.add_argument("--baseline", help="experiment to compare with (default: the gate policy's baseline)")
    gate.add_argument("--set-baseline", action="store_true", help="record this run as the new baseline if it passes")
    gate.add_argument("--junit", help="write a JUnit XML report to this file")
    gate.add_argument("--summary", help="append a Markdown report to this file (e.g. $GITHUB_STEP_SUMMARY)")
    gate.add_argument(
        "--poll-interval", type=_positive, default=DEFAULT_POLL_INTERVAL, help="seconds between polls (default: 2)"
    )
    gate.add_argument(
        "--max-wait",
        type=_non_negative,
        default=DEFAULT_MAX_WAIT,
        help="seconds to wait for a running gate and on 429s in total (default: 300)",
    )
    gate.set_defaults(handler=_cmd_gate)
    return parser


def _report(error: EvalgateError, command: str | None) -> None:
    prefix = "could not decide" if command == "gate" else "error"
    print(f"evalgate: {prefix}: {error.message}", file=sys.stderr)
    for line in error.details:
        print(f"  {line}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit code (0 PASS/done, 1 FAIL, 2 could not decide)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # -h, --version (0) and usage errors (2)
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else EXIT_UNDECIDED)
    # --summary "$GITHUB_STEP_SUMMARY" outside GitHub expands to "": no report, not an error.
    for option in ("junit", "summary", "output"):
        if getattr(args, option, None) == "":
            setattr(args, option, None)
    try:
        return args.handler(args)
    except EvalgateError as exc:
        _report(exc, args.command)
        return EXIT_UNDECIDED
    except Exception:  # a bug must never exit 1, which CI would read as the gate's FAIL
        print("evalgate: internal error (please report it):", file=sys.stderr)
        traceback.print_exc()
        return EXIT_UNDECIDED


if __name__ == "__main__":
    sys.exit(main())
