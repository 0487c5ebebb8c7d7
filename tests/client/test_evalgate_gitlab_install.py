"""The GitLab template as its own image runs it: Python 3.12, no git, the client installed
from the evalsite server (``/client/evalgate.tar.gz``), then the gate, against a live server.

The image is stood in for by a fresh Python 3.12 virtualenv first on PATH, and by a
``git`` that fails loudly, so a step that needs git breaks the job as it would on
``python:3.12-slim``. Each script entry runs under ``sh -e`` as GitLab's runner does.
"""

import glob
import os
import subprocess
from pathlib import Path

import pytest
import yaml

import evalgate
from examples.reservo import load_golden_cases
from examples.reservo.tracing import case_trace
from tests.client.test_evalgate_pr_comment import forge_server
from tests.live import ROOT

NO_GIT = "#!/bin/sh\necho 'git: not found (python:3.12-slim has no git)' >&2\nexit 127\n"


def python312():
    found = sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.12*/bin/python3.12")))
    if not found:
        if os.environ.get("CI"):
            pytest.fail("no Python 3.12 under ~/.pyenv/versions: the GitLab template's image runs 3.12")
        pytest.skip("no Python 3.12 under ~/.pyenv/versions")
    return found[-1]


@pytest.fixture
def image(tmp_path):
    """PATH of a python:3.12-slim stand-in: a fresh 3.12 venv, and git that is not there."""
    env = tmp_path / "image"
    subprocess.run([python312(), "-m", "venv", str(env)], check=True, timeout=300)
    (env / "nogit").mkdir()
    git = env / "nogit" / "git"
    git.write_text(NO_GIT)
    git.chmod(0o755)
    return f"{env / 'bin'}:{env / 'nogit'}:{os.environ['PATH']}", env / "bin"


def gitlab_job(tmp_path, path, variables):
    job = yaml.safe_load((ROOT / "ci" / "evalgate.gitlab-ci.yml").read_text())[".evalgate"]
    base = {k: v for k, v in os.environ.items() if not k.startswith(("EVALSITE_", "DJANGO", "PYTHONPATH", "VIRTUAL"))}
    env = {**base, **job["variables"], **variables, "PATH": path}
    for entry in job["script"]:
        result = subprocess.run(
            ["sh", "-e", "-c", entry], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
        )
        if result.returncode != 0:
            return result
    return result


def test_the_templates_install_needs_no_git_and_its_gate_runs(server, reservo, tmp_path, image):
    url, key = server
    path, bin_dir = image
    tracer = evalgate.Tracer(experiment="mr-3", dataset="reservo")
    for case in load_golden_cases():
        case_trace(tracer, case, trace_id=f"mr-3-{case['name']}")
    tracer.write_jsonl(tmp_path / "runs.jsonl")
    variables = {
        "EVALSITE_URL": url + "/", "EVALSITE_API_KEY": key, "EVALGATE_DATASET": "reservo",
        "EVALGATE_EXPERIMENT": "mr-3", "EVALGATE_RUNS": "runs.jsonl", "CI_JOB_ID": "77",
    }  # fmt: skip

    result = gitlab_job(tmp_path, path, variables)

    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("GATE: PASS (5/5)\n")
    assert Path(bin_dir / "evalgate").is_file()  # installed into the image's Python, from the server
    assert (tmp_path / "evalgate-junit.xml").is_file()


def test_the_stand_in_image_really_has_no_git(image):
    path, _ = image

    result = subprocess.run(["sh", "-c", "git --version"], env={"PATH": path}, capture_output=True, text=True)

    assert result.returncode == 127


def test_the_template_notes_the_verdict_on_the_merge_request_with_a_token(server, reservo, tmp_path, image):
    url, key = server
    path, _ = image
    gitlab = forge_server("gitlab")
    tracer = evalgate.Tracer(experiment="mr-5", dataset="reservo")
    for case in load_golden_cases():
        case_trace(tracer, case, trace_id=f"mr-5-{case['name']}")
    evalgate.upload_runs(reservo, tracer.runs)
    variables = {
        "EVALSITE_URL": url, "EVALSITE_API_KEY": key, "EVALGATE_DATASET": "reservo", "EVALGATE_EXPERIMENT": "mr-5",
        "EVALGATE_GITLAB_TOKEN": "glpat-job", "CI_API_V4_URL": gitlab.forge.url + "/api/v4", "CI_PROJECT_ID": "42",
        "CI_MERGE_REQUEST_IID": "5",
    }  # fmt: skip

    try:
        result = gitlab_job(tmp_path, path, variables)
    finally:
        gitlab.shutdown()
        gitlab.server_close()

    assert result.returncode == 0, result.stdout + result.stderr
    assert gitlab.forge.writes() == [("POST", "/api/v4/projects/42/merge_requests/5/notes")]
    assert gitlab.forge.requests[0]["headers"]["Authorization"] == "Bearer glpat-job"
    assert "evalsite gate: PASS (5/5)" in gitlab.forge.comments[1]
