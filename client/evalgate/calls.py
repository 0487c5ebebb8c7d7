"""The API calls a CI job makes: fetch cases, import a golden set, upload runs, ask the gate."""

from __future__ import annotations

import json
import re
from typing import Any
from urllib import parse as urlparse

from .errors import ApiError, EvalgateError
from .http import Client, problem_details

MAX_BATCH = 500  # runs per POST /v1/api/traces (the server accepts up to EVALSITE_MAX_BATCH, 1000 by default)

DEFAULT_POLL_INTERVAL = 2.0

PENDING_STATUSES = ("queued", "pending", "running")


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
        "POST",
        client.url(f"datasets/{quoted}/import"),
        raw_body=body,
        content_type="application/jsonl",
        idempotent=True,  # cases are matched by name: the same file twice changes nothing
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
    attempt: str | None = None,
) -> dict:
    """POST ``runs`` in batches; returns ``{"runs", "created", "unchanged"}`` summed.

    ``experiment`` is set on runs that have none (the input is not modified). Safe to
    repeat: the server stores identical runs once and reports them ``unchanged``.

    ``attempt`` (a CI job's attempt, e.g. ``$GITHUB_RUN_ID-$GITHUB_RUN_ATTEMPT``) makes a
    re-run of the same job upload cleanly: each trace id gets ``@<attempt>`` (so the new
    runs never clash with the first attempt's), and each case's runs that carry no
    ``trial`` are numbered 1, 2, ... in file order, so the re-run's trials supersede the
    first attempt's at the gate instead of adding to them.
    """
    if not 1 <= batch_size <= MAX_BATCH:
        raise EvalgateError(f"batch size must be between 1 and {MAX_BATCH}, got {batch_size}")
    if attempt:
        runs = runs_for_attempt(runs, attempt)
    totals = {"runs": 0, "created": 0, "unchanged": 0}
    url = client.url("traces")
    for start in range(0, len(runs), batch_size):
        batch = runs[start : start + batch_size]
        if experiment:
            batch = [run if run.get("experiment") else {**run, "experiment": experiment} for run in batch]
        try:
            # Idempotent: a run already stored with the same content is "unchanged".
            _, body = client.request("POST", url, {"traces": batch}, idempotent=True)
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


def runs_for_attempt(runs: list[dict], attempt: str) -> list[dict]:
    """The runs as one CI attempt uploads them (see ``upload_runs``); the input is not modified."""
    seen: dict = {}
    out = []
    for run in runs:
        run = {**run, "trace_id": f"{run.get('trace_id')}@{attempt}"}
        if run.get("case") is not None and run.get("trial") is None:
            key = (run.get("experiment"), run.get("dataset"), str(run["case"]))
            seen[key] = seen.get(key, 0) + 1
            run["trial"] = seen[key]
        out.append(run)
    return out


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
    init_floor: bool = False,
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
    if init_floor:
        payload["init_floor"] = True
    # Safe to repeat: asking twice records two verdicts of the same runs, and a baseline
    # already set to this experiment is set to it again.
    status, answer = client.request("POST", client.url("gate"), payload, idempotent=True)
    run_id = None
    while True:
        if not isinstance(answer, dict):
            raise EvalgateError(f"the gate answered something that is not a JSON object: {answer!r:.200}")
        run_id = answer.get("gate_run_id", run_id)
        state = answer.get("status")
        if state is None:
            state = "running" if status == 202 else "done"
        if state == "done":
            return cases_completed(client, _verdict_checked(answer), status_url=client.url("gate"))
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


def cases_completed(client: Client, answer: dict, *, status_url: str) -> dict:
    """The verdict with every case: a large gate's answer carries one page of ``cases`` (and of
    ``quarantined``) and ``cases_next`` (``quarantined_next``), the link to the rest; each
    page is followed to its last (``next`` null) and appended. The links are then null."""
    for key in ("cases", "quarantined"):
        link = answer.get(f"{key}_next")
        url = client.follow(link, status_url) if link else None
        seen = set()
        while url:
            if url in seen:
                raise EvalgateError(f"pagination loops: {url} was already read")
            seen.add(url)
            _, page = client.request("GET", url)
            if not isinstance(page, dict) or not isinstance(page.get("results"), list):
                raise EvalgateError(f"GET {url} did not answer a page of cases ({{next, results}})")
            answer[key] = [*(answer.get(key) or []), *page["results"]]
            link = page.get("next")
            url = client.follow(link, url) if link else None
        if f"{key}_next" in answer:
            answer[f"{key}_next"] = None
    return answer


def trials_check(client: Client, dataset: str, trials: int) -> None:
    """Stop (EvalgateError) unless the dataset's gate policy asks for ``trials`` runs of each case.

    The workflow decides how many times it runs each case; the policy decides how many
    the gate needs. When they differ the verdict would not mean what the workflow
    thinks, so the gate is not asked. A server whose policy has no ``trials`` needs one.
    """
    _, policy = client.request("GET", client.url(f"datasets/{urlparse.quote(dataset, safe='')}/gate-policy"))
    needed = policy.get("trials", 1) if isinstance(policy, dict) else None
    if needed == trials:
        return
    if not isinstance(policy, dict) or "trials" not in policy:
        raise EvalgateError(f"--trials {trials}: this server's gate policy has no trials (it reads one run per case)")
    raise EvalgateError(
        f"--trials {trials}: the gate policy of dataset {dataset} needs {needed} trials per case; "
        f"run --trials {needed}"
        + (
            " (fewer trials loosen the gate: only a project admin may change that, with a reason)"
            if trials < needed
            else ""
        )
    )


def feedback(
    client_or_url: Client | str,
    key: str | None,
    trace_id: str,
    name: str,
    value: bool | float | str,
    comment: str | None = None,
    user_id: str | None = None,
) -> dict:
    """Send an end user's feedback on run ``trace_id``: ``{"accepted": true}`` (202).

    ``client_or_url`` is a ``Client`` (``key``, when given, replaces its key) or the
    server's URL, with ``key`` a key of the ``feedback`` scope. ``value`` is true/false,
    a number on 0..1, or a category. The run may not have arrived yet: the server keeps
    the feedback until it does. Sending the same feedback again changes nothing.
    """
    if isinstance(client_or_url, Client):
        client = client_or_url
        if key and key != client.key:
            client = Client(client.base, key, timeout=client.timeout, budget=client.budget)
    else:
        if not key:
            raise EvalgateError("feedback needs a key of the feedback scope")
        client = Client(client_or_url, key)
    body: dict[str, Any] = {"name": name, "value": value}
    if comment is not None:
        body["comment"] = comment
    if user_id is not None:
        body["user_id"] = user_id
    _, answer = client.request("POST", client.url(f"traces/{urlparse.quote(trace_id, safe='')}/feedback"), body)
    return answer
