"""The verdict as one sticky comment on the pull request (GitHub) or merge request (GitLab).

``comment_post`` finds the request's comment that carries the hidden marker of this
gate, ``<!-- evalgate server=HOST dataset=NAME -->`` (``comment_marker``), and edits it,
or adds one when there is none: a pipeline run again, or a push to the same request,
updates the comment instead of adding another, and two gates of one request (two
datasets, or two servers) keep a comment each. A comment with the marker of older
clients, the bare ``<!-- evalgate -->``, is taken over when the request has none with
this gate's marker.

Where it posts comes from the CI's own environment:

- GitHub: ``GITHUB_API_URL`` (https://api.github.com, or a GitHub Enterprise server's),
  ``GITHUB_REPOSITORY``, and the pull request's number from the event
  (``GITHUB_EVENT_PATH``) or ``GITHUB_REF`` (``refs/pull/N/merge``). Token:
  ``EVALGATE_GITHUB_TOKEN``, else ``GITHUB_TOKEN`` (needs ``pull-requests: write``).
- GitLab: ``CI_API_V4_URL``, ``CI_PROJECT_ID``, ``CI_MERGE_REQUEST_IID`` (set in merge
  request pipelines). Token: ``EVALGATE_GITLAB_TOKEN`` (a project or personal access token
  with the ``api`` scope; the job token cannot write notes).

Outside a pull or merge request there is nothing to comment on: ``comment_post`` returns
None. Every failure is an EvalgateError. The token only goes to the API named by the
environment; redirects are not followed (the same Client as for evalsite).
"""

from __future__ import annotations

import json
import os
import re
from urllib import parse as urlparse

from .errors import EvalgateError
from .http import Client

MARKER = "<!-- evalgate -->"  # without a server or dataset: the marker older clients wrote
# GitHub refuses a comment over 65,536 characters; GitLab's notes allow more.
BODY_MAX = 60_000
PAGE_SIZE = 100
MAX_PAGES = 50  # 5,000 comments: a request with more is not read to the end


def comment_marker(dataset: str | None = None, server: str | None = None) -> str:
    """The hidden first line naming one gate: ``<!-- evalgate server=HOST dataset=NAME -->``.

    ``server`` is the evalsite address (scheme, trailing slash and ``/v1/api`` dropped),
    so a dataset of the same name on another server is another gate. Both are
    percent-encoded: no name can close the HTML comment or look like another one.
    """
    parts = []
    if server:
        host = urlparse.urlsplit(server.strip())
        address = (host.netloc + host.path).rstrip("/").removesuffix("/v1/api").rstrip("/")
        parts.append("server=" + urlparse.quote(address or server, safe=":/@"))
    if dataset:
        parts.append("dataset=" + urlparse.quote(dataset, safe=""))
    return "<!-- " + " ".join(["evalgate", *parts]) + " -->"


def comment_body(markdown: str, marker: str = MARKER) -> str:
    """The comment's text: the marker, then the Markdown (cut short if it is too long)."""
    if len(markdown) > BODY_MAX:
        markdown = markdown[:BODY_MAX] + "\n\n... (cut short: the job's summary and the gate page have it all)\n"
    return f"{marker}\n{markdown}"


def _first_line(comment) -> str:
    return str(comment.get("body") or "").split("\n", 1)[0].strip() if isinstance(comment, dict) else ""


class _Forge:
    """One provider's endpoints for a request's comments."""

    def __init__(self, client: Client, comments_url: str, edit_url: str, edit_method: str):
        self.client = client
        self.comments_url = comments_url
        self.edit_url = edit_url  # with {id}
        self.edit_method = edit_method

    def find(self, marker: str) -> int | None:
        """The id of the first comment that starts with ``marker``; else of the first with
        the older clients' bare marker (taken over); else None."""
        legacy = None
        for page in range(1, MAX_PAGES + 1):
            url = f"{self.comments_url}?{urlparse.urlencode({'per_page': PAGE_SIZE, 'page': page})}"
            _, comments = self.client.request("GET", url)
            if not isinstance(comments, list):
                raise EvalgateError(f"GET {url} did not answer a list of comments")
            for comment in comments:
                first = _first_line(comment)
                if first == marker:
                    return comment["id"]
                if first == MARKER and legacy is None:
                    legacy = comment["id"]
            if len(comments) < PAGE_SIZE:
                break
        return legacy

    def post(self, body: str) -> dict:
        existing = self.find(body.split("\n", 1)[0])
        if existing is None:
            _, answer = self.client.request("POST", self.comments_url, {"body": body})
            action = "created"
        else:
            url = self.edit_url.format(id=existing)
            _, answer = self.client.request(self.edit_method, url, {"body": body}, idempotent=True)
            action = "updated"
        answer = answer if isinstance(answer, dict) else {}
        return {"action": action, "id": answer.get("id", existing), "url": answer.get("html_url")}


def _required(env, name: str, what: str) -> str:
    value = env.get(name)
    if not value:
        raise EvalgateError(f"cannot comment on the {what}: {name} is not set (is this job running in CI?)")
    return value


def _github_pull_number(env) -> int | None:
    path = env.get("GITHUB_EVENT_PATH")
    if path:
        try:
            with open(path, encoding="utf-8") as fh:
                event = json.load(fh)
        except (OSError, ValueError) as exc:
            raise EvalgateError(f"cannot read the GitHub event {path}: {exc}") from None
        number = (event.get("pull_request") or {}).get("number") if isinstance(event, dict) else None
        if isinstance(number, int):
            return number
    match = re.fullmatch(r"refs/pull/(\d+)/(?:merge|head)", env.get("GITHUB_REF") or "")
    return int(match.group(1)) if match else None


def _github(env, timeout: float) -> _Forge | None:
    number = _github_pull_number(env)
    if number is None:
        return None
    token = env.get("EVALGATE_GITHUB_TOKEN") or _required(env, "GITHUB_TOKEN", "pull request")
    api = (env.get("GITHUB_API_URL") or "https://api.github.com").rstrip("/")
    repository = _required(env, "GITHUB_REPOSITORY", "pull request")
    client = Client(api, token, timeout=timeout)
    client.headers = {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28"}
    base = f"{api}/repos/{repository}/issues"
    return _Forge(client, f"{base}/{number}/comments", f"{base}/comments/{{id}}", "PATCH")


def _gitlab(env, timeout: float) -> _Forge | None:
    iid = env.get("CI_MERGE_REQUEST_IID")
    if not iid:
        return None
    token = _required(env, "EVALGATE_GITLAB_TOKEN", "merge request")
    api = _required(env, "CI_API_V4_URL", "merge request").rstrip("/")
    project = urlparse.quote(_required(env, "CI_PROJECT_ID", "merge request"), safe="")
    client = Client(api, token, timeout=timeout)
    notes = f"{api}/projects/{project}/merge_requests/{urlparse.quote(iid, safe='')}/notes"
    return _Forge(client, notes, f"{notes}/{{id}}", "PUT")


FORGES = {"github": _github, "gitlab": _gitlab}


def comment_post(
    markdown: str, *, forge: str, env=None, timeout: float = 30.0, dataset: str | None = None, server: str | None = None
) -> dict | None:
    """Create or update the request's comment of the gate of ``dataset`` on ``server`` with ``markdown``.

    Returns ``{"action": "created" | "updated", "id", "url"}``, or None when the job is
    not running for a pull or merge request. Idempotent: the same call twice leaves one
    comment with the same text.
    """
    if forge not in FORGES:
        raise EvalgateError(f"unknown comment target {forge!r}: github or gitlab")
    target = FORGES[forge](os.environ if env is None else env, timeout)
    if target is None:
        return None
    return target.post(comment_body(markdown, comment_marker(dataset, server)))
