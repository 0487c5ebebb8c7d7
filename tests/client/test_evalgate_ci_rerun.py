"""Re-running a CI job for the same commit works: the documented recipes, twice in a row, against a live server.

The second attempt's agent writes runs with the same trace ids and other content (a new
timestamp, here a fixed answer): uploaded as they are, they would be a 409. With the
attempt in the run ids (the action and the GitLab template pass it), the second upload
stores new runs that supersede the first attempt's trial by trial, and the gate judges
the second attempt: a job re-run to fix a flaky failure passes.
"""

import os
import subprocess
import venv

import yaml

import evalgate
from examples.reservo import load_golden_cases, load_script
from examples.reservo.tracing import case_trace
from tests.client.test_evalgate_ci_integrations import action_run
from tests.live import ROOT


def _runs_file(path, *, broken, started_at):
    """The agent's output for one CI attempt: every case, the first one regressed when ``broken``."""
    tracer = evalgate.Tracer(experiment="sha-1", dataset="reservo")
    for case in load_golden_cases():
        script = load_script("quote_books_instead") if broken and case["name"] == "quote_focus_pro_3h" else None
        case_trace(tracer, case, script=script, trace_id=f"sha-1-{case['name']}")
    for run in tracer.runs:
        run["started_at"] = started_at
    path.parent.mkdir(parents=True, exist_ok=True)
    tracer.write_jsonl(path)
    return path


def test_the_github_action_twice_for_the_same_commit(server, reservo, tmp_path):
    url, key = server
    inputs = {"url": url, "key": key, "dataset": "reservo", "experiment": "sha-1", "runs": "runs.jsonl"}
    _runs_file(tmp_path / "a" / "runs.jsonl", broken=True, started_at="2026-11-30T10:00:00Z")
    first = action_run(tmp_path / "a", **inputs)
    _runs_file(tmp_path / "b" / "runs.jsonl", broken=False, started_at="2026-11-30T11:00:00Z")
    os.environ["GITHUB_RUN_ATTEMPT"] = "2"
    try:
        second = action_run(tmp_path / "b", **inputs)
    finally:
        del os.environ["GITHUB_RUN_ATTEMPT"]
    assert first[-1][1].returncode == 1, first[-1][1].stdout + first[-1][1].stderr
    assert second[1][1].stdout == "uploaded 5 runs (5 created, 0 unchanged)\n", second[1][1].stderr
    assert second[-1][1].returncode == 0, second[-1][1].stdout + second[-1][1].stderr
    assert second[-1][1].stdout.startswith("GATE: PASS (5/5)\n")


def _gitlab_job(tmp_path, env):
    """The template's script lines, run by bash in the job's variables (the image's python is a venv's)."""
    job = yaml.safe_load((ROOT / "ci" / "evalgate.gitlab-ci.yml").read_text())[".evalgate"]
    python = tmp_path.parent / "python"
    if not python.exists():
        venv.create(python, with_pip=True)
    variables = {**job["variables"], **env}
    variables["EVALGATE_EXPERIMENT"] = env["EVALGATE_EXPERIMENT"]
    base = {k: v for k, v in os.environ.items() if not k.startswith(("EVALSITE_", "DJANGO", "PYTHONPATH"))}
    base["PATH"] = f"{python / 'bin'}:{base['PATH']}"
    script = "\n".join(job["script"])
    return subprocess.run(
        ["bash", "-e", "-c", script], cwd=tmp_path, env={**base, **variables}, capture_output=True, text=True,
        timeout=600,
    )  # fmt: skip


def test_the_gitlab_template_twice_for_the_same_commit(server, reservo, tmp_path):
    url, key = server
    env = {
        "EVALSITE_URL": url, "EVALSITE_API_KEY": key, "EVALGATE_DATASET": "reservo", "EVALGATE_EXPERIMENT": "sha-1",
        "EVALGATE_RUNS": "runs.jsonl", "EVALGATE_PACKAGE": str(ROOT / "client"), "CI_JOB_ID": "4411",
    }  # fmt: skip
    _runs_file(tmp_path / "a" / "runs.jsonl", broken=True, started_at="2026-11-30T10:00:00Z")
    first = _gitlab_job(tmp_path / "a", env)
    _runs_file(tmp_path / "b" / "runs.jsonl", broken=False, started_at="2026-11-30T11:00:00Z")
    second = _gitlab_job(tmp_path / "b", {**env, "CI_JOB_ID": "4412"})
    assert first.returncode == 1, first.stdout + first.stderr
    assert second.returncode == 0, second.stdout + second.stderr
    assert "uploaded 5 runs (5 created, 0 unchanged)" in second.stdout
    assert "GATE: PASS (5/5)" in second.stdout
