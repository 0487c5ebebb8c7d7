"""The production recipe of docs/deploy.md, run for real: machines made of a copy of the code.

A "machine" is a directory holding a copy of the source tree, its own ``var/`` and the
environment file of the recipe; it shares only PostgreSQL and Redis with the others.
Its processes are the ``Procfile``'s lines, run by ``sh`` as a process manager runs
them, with a venv made from ``requirements.txt`` alone (built once per requirements
file under ``var/``, then reused).
"""

import hashlib
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent.parent
_NOT_COPIED = shutil.ignore_patterns(".venv", "var", ".git", "__pycache__", "node_modules", "tests", "*.sqlite3")


def deploy_venv():
    """A venv with ``requirements.txt`` only (no test tools, no client); its ``bin`` path."""
    digest = hashlib.sha256((ROOT / "requirements.txt").read_bytes()).hexdigest()[:12]
    venv = ROOT / "var" / f"deploy-venv-{digest}"
    if not (venv / ".complete").exists():
        shutil.rmtree(venv, ignore_errors=True)
        subprocess.run([str(Path(sys.base_prefix) / "bin" / "python3"), "-m", "venv", str(venv)], check=True)
        subprocess.run(
            [str(venv / "bin" / "pip"), "install", "--quiet", "-r", str(ROOT / "requirements.txt")],
            check=True, capture_output=True,
        )  # fmt: skip
        # Written last: a build cut short is made again, not reused half installed.
        (venv / ".complete").write_text("")
    return venv / "bin"


def procfile():
    """``{name: command}`` from the Procfile at the root of the tree."""
    lines = (ROOT / "Procfile").read_text().splitlines()
    return dict(line.split(": ", 1) for line in lines if line.strip() and not line.startswith("#"))


@dataclass
class Machine:
    name: str
    home: Path
    env: dict
    processes: dict = field(default_factory=dict)

    def run(self, command, **kwargs):
        """Run a shell command in the machine (as the process manager would); its result."""
        return subprocess.run(
            ["sh", "-c", command], cwd=self.home, env=self.env, capture_output=True, text=True, timeout=600, **kwargs
        )

    def start(self, process_name, command):
        log = open(self.home / f"{process_name}.log", "w")  # noqa: SIM115 - the child owns it
        self.processes[process_name] = subprocess.Popen(
            ["sh", "-c", "exec " + command], cwd=self.home, env=self.env, stdout=log, stderr=subprocess.STDOUT
        )

    def log(self, process_name):
        return (self.home / f"{process_name}.log").read_text()[-4000:]

    def stop(self):
        for process in self.processes.values():
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in self.processes.values():
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def machine_make(base, name, *, bin_dir, port, shared_env):
    """Copy the tree into ``base/name`` and give it the recipe's environment."""
    home = base / name
    shutil.copytree(ROOT, home, ignore=_NOT_COPIED)
    (home / "metrics").mkdir()
    env = {
        "PATH": f"{bin_dir}:/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "PYTHONUNBUFFERED": "1",
        "EVALSITE_VAR_DIR": str(home / "var"),
        "EVALSITE_BIND": f"127.0.0.1:{port}",
        # The machine's own counters directory (deploy/tmpfiles.d/evalsite.conf).
        "PROMETHEUS_MULTIPROC_DIR": str(home / "metrics"),
        **shared_env,
    }
    return Machine(name=name, home=home, env=env)


class Client:
    """JSON over HTTP to one web process, as the TLS proxy would forward it."""

    def __init__(self, base_url, key=None):
        self.base_url = base_url
        self.key = key

    def metrics(self, token):
        """``{(name, labels...): value}`` of this web process's ``/metrics``."""
        from prometheus_client.parser import text_string_to_metric_families

        # Straight to the web process over plain HTTP, as a scraper on the internal network
        # does: answered, not redirected to https.
        request = urllib.request.Request(self.base_url + "/metrics")
        request.add_header("Authorization", f"Bearer {token}")
        with urllib.request.urlopen(request, timeout=30) as response:
            text = response.read().decode()
        return {
            (s.name, *sorted(s.labels.items())): s.value
            for f in text_string_to_metric_families(text)
            for s in f.samples
        }

    def call(self, method, path, body=None, *, content_type="application/json"):
        data = body if isinstance(body, bytes) or body is None else orjson.dumps(body)
        request = urllib.request.Request(self.base_url + path, data=data, method=method)
        # What the proxy of docs/deploy.md sets: the request came in over TLS.
        request.add_header("X-Forwarded-Proto", "https")
        if data is not None:
            request.add_header("Content-Type", content_type)
        if self.key:
            request.add_header("Authorization", f"Bearer {self.key}")
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return response.status, orjson.loads(response.read() or b"null")
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode(errors="replace")

    def answers(self):
        try:
            return self.call("GET", "/healthz")[0] == 200
        except OSError:
            return False


def wait_until(predicate, *, timeout, what, processes=()):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for name, process in processes:
            if process.poll() is not None:
                raise AssertionError(f"{name} exited with {process.returncode} while waiting for {what}")
        value = predicate()
        if value:
            return value
        time.sleep(0.3)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")
