"""The CI definitions as a user takes them: from the evalsite server, with no placeholder.

The server serves the GitHub action at ``/client/action.yml`` and the GitLab template at
``/client/evalgate.gitlab-ci.yml`` (no key, the bytes of this deployment); the action,
saved alone in a repository, installs the client from the server and gates. No doc or
template tells a user to copy a placeholder such as ``OWNER/evalsite``.
"""

import re
import urllib.request

import pytest

import evalgate
from examples.reservo import load_golden_cases
from examples.reservo.tracing import case_trace
from tests.client.test_evalgate_ci_integrations import action_run
from tests.live import ROOT

SERVED = {"/client/action.yml": ROOT / "action.yml", "/client/evalgate.gitlab-ci.yml": ROOT / "ci" / "evalgate.gitlab-ci.yml"}  # fmt: skip
# A repository address to fill in: copied as it is, the workflow fails to resolve it.
PLACEHOLDER = re.compile(r"\bOWNER\b|github\.com/(?:your|my)-|/evalsite@")


def user_facing_files():
    """Every doc and CI definition a user reads or copies from."""
    paths = [ROOT / "README.md", ROOT / "action.yml", ROOT / "client" / "README.md", *ROOT.glob("docs/*.md")]
    paths += [*ROOT.glob("ci/*.yml"), *ROOT.glob("examples/**/*.md"), *ROOT.glob("deploy/**/*.example")]
    return [p for p in paths if p.is_file()]


def test_no_doc_or_template_holds_a_placeholder_to_fill_in():
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in user_facing_files()
        for number, line in enumerate(path.read_text("utf-8").splitlines(), 1)
        if PLACEHOLDER.search(line)
    ]

    assert len(user_facing_files()) >= 10
    assert found == []


def test_the_placeholder_check_finds_the_old_action_reference():
    assert PLACEHOLDER.search("      - uses: OWNER/evalsite@main")
    assert PLACEHOLDER.search("  - remote: https://raw.githubusercontent.com/OWNER/evalsite/main/ci/x.yml")
    assert PLACEHOLDER.search("      - uses: acme/evalsite@main")
    assert not PLACEHOLDER.search("      - uses: ./.github/actions/evalgate")


@pytest.mark.parametrize("path", sorted(SERVED))
def test_the_server_serves_the_ci_definitions_without_a_key(live_url, path):
    with urllib.request.urlopen(live_url + path, timeout=30) as response:
        body, kind = response.read(), response.headers["Content-Type"]

    assert body == SERVED[path].read_bytes()
    assert kind == "text/yaml; charset=utf-8"


def test_the_action_saved_alone_installs_the_client_from_the_server_and_gates(server, reservo, tmp_path):
    url, key = server
    with urllib.request.urlopen(url + "/client/action.yml", timeout=30) as response:
        saved = response.read().decode("utf-8")
    tracer = evalgate.Tracer(experiment="pr-9", dataset="reservo")
    for case in load_golden_cases():
        case_trace(tracer, case, trace_id=f"pr-9-{case['name']}")
    tracer.write_jsonl(tmp_path / "runs.jsonl")

    steps = action_run(
        tmp_path, saved, url=url + "/v1/api/", key=key, dataset="reservo", experiment="pr-9", runs="runs.jsonl"
    )

    assert not (tmp_path / "action" / "client").exists()
    assert [name for name, _ in steps] == ["Install evalgate", "Upload the runs", "Gate"]
    assert steps[-1][1].returncode == 0, steps[0][1].stderr + steps[-1][1].stderr
    assert steps[-1][1].stdout.startswith("GATE: PASS (5/5)\n")
    assert (tmp_path / "runner" / "evalgate" / "bin" / "evalgate").is_file()
