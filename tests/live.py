"""Real processes for tests: a gunicorn web server and Celery workers on the test database.

They run against the database the test session created (PostgreSQL or the SQLite
file), so a test using them must use ``transactional_db`` (data it writes must be
committed to be seen). The broker is the one the settings name: Redis when
``REDIS_URL`` is set, else the filesystem broker under ``var/``. Each worker listens on
a queue of its own, so a developer's running worker cannot steal a test's tasks.
"""

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path

from django.conf import settings
from django.db import connection

ROOT = Path(__file__).resolve().parent.parent


def database_url():
    """The URL of the test database, for child processes."""
    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{Path(db['NAME']).resolve()}"
    auth = db["USER"] + (f":{db['PASSWORD']}" if db["PASSWORD"] else "")
    host = db["HOST"] or "localhost"
    port = f":{db['PORT']}" if db["PORT"] else ""
    return f"postgresql://{auth}@{host}{port}/{db['NAME']}"


def child_env(**extra):
    env = dict(os.environ)
    env["DATABASE_URL"] = database_url()
    env["DJANGO_SETTINGS_MODULE"] = "evalsite.settings"
    env["PYTHONUNBUFFERED"] = "1"
    env.update({k: str(v) for k, v in extra.items()})
    return env


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def web_server(*, workers=2, threads=4, env=None):
    """A gunicorn server on a free loopback port; yields its base URL."""
    port = free_port()
    log = open(Path(settings.VAR_DIR) / f"test-gunicorn-{port}.log", "w")  # noqa: SIM115 - closed below
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "evalsite.wsgi", "--bind", f"127.0.0.1:{port}",
         "--workers", str(workers), "--threads", str(threads), "--worker-class", "gthread", "--timeout", "120"],
        cwd=ROOT, env=child_env(**(env or {})), stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_until(lambda: _answers(url + "/healthz"), process, log.name, what="web server")
        yield url
    finally:
        process_stop(process)
        log.close()


@contextlib.contextmanager
def celery_worker(*, queue=None, concurrency=1, env=None):
    """A real Celery worker process; yields ``(queue, process)``."""
    queue = queue or f"test-{uuid.uuid4().hex[:12]}"
    log_path = Path(settings.VAR_DIR) / f"test-worker-{queue}.log"
    process = worker_start(queue=queue, concurrency=concurrency, log_path=log_path, env=env)
    try:
        yield queue, process
    finally:
        process_stop(process)


def worker_start(*, queue, concurrency=1, log_path, env=None):
    """Start a worker (``subprocess.Popen``); the caller stops or kills it."""
    log = open(log_path, "a")  # noqa: SIM115 - the child owns it
    return subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "evalsite", "worker", "--queues", queue, "--concurrency",
         str(concurrency), "--pool", "prefork", "--loglevel", "INFO", "--without-gossip", "--without-mingle",
         "--hostname", f"{queue}-{uuid.uuid4().hex[:6]}@%h"],
        cwd=ROOT, env=child_env(**(env or {})), stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip


def wait_for(predicate, *, timeout=60, interval=0.2, what="condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def _answers(url):
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


def _wait_until(predicate, process, log_name, *, what, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(
                f"{what} exited with {process.returncode}; see {log_name}:\n{Path(log_name).read_text()[-3000:]}"
            )
        if predicate():
            return
        time.sleep(0.2)
    raise AssertionError(f"{what} did not start within {timeout}s; see {log_name}")


def process_stop(process):
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def children_of(pid):
    """The process ids whose parent is ``pid`` (read from /proc)."""
    children = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                children.append(int(entry.name))
    return children


def kill_worker(process):
    """kill -9 a worker's children (one may be writing), then the worker itself: no clean-up runs."""
    for child in children_of(process.pid):
        os.kill(child, signal.SIGKILL)
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=10)
