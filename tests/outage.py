"""Servers a test owns and may stop: a private PostgreSQL cluster and a private Redis.

Each runs on a free port with its data under a temporary folder, so stopping it
touches no one else's database or broker. ``private_postgres`` needs PostgreSQL's
server binaries (``initdb``, ``pg_ctl``); ``postgres_binaries`` says where they are,
or ``None``, and the tests skip without them. PostgreSQL refuses to run as root, so
as root the cluster runs as the ``postgres`` user.
"""

import contextlib
import glob
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.live import ROOT, child_env, free_port, process_stop, wait_for


def postgres_binaries():
    """The folder holding ``initdb`` and ``pg_ctl`` (the newest version), or ``None``."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(Path(p).parts[-3]))
    return Path(found[-1]).parent if found and Path(found[-1]).with_name("initdb").exists() else None


class PrivatePostgres:
    def __init__(self, bin_dir, data_dir, port):
        self.bin_dir, self.data_dir, self.port = bin_dir, data_dir, port
        self.url = f"postgresql://postgres@127.0.0.1:{port}/evalsite"

    def _run(self, *args, check=True):
        user = "postgres" if os.geteuid() == 0 else None
        return subprocess.run(
            [str(self.bin_dir / args[0]), *args[1:]], user=user, check=check, capture_output=True, text=True
        )

    def start(self):
        self._run(
            "pg_ctl", "-D", str(self.data_dir), "-w", "-t", "60", "-l", str(self.data_dir / "server.log"),
            "-o", f"-p {self.port} -k {self.data_dir} -c listen_addresses=127.0.0.1 -c fsync=off",
            "start",
        )  # fmt: skip

    def stop(self):
        self._run("pg_ctl", "-D", str(self.data_dir), "-w", "-m", "immediate", "stop", check=False)


@contextlib.contextmanager
def private_postgres():
    """A PostgreSQL cluster of its own with the ``evalsite`` database migrated; yields ``PrivatePostgres``."""
    bin_dir = postgres_binaries()
    base = Path(tempfile.mkdtemp(prefix="evalsite-pg-"))
    data_dir = base / "data"
    data_dir.mkdir()
    if os.geteuid() == 0:
        postgres = pwd.getpwnam("postgres")
        for path in (base, data_dir):
            os.chown(path, postgres.pw_uid, postgres.pw_gid)
    server = PrivatePostgres(bin_dir, data_dir, free_port())
    try:
        server._run("initdb", "-D", str(data_dir), "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8")
        server.start()
        server._run("createdb", "-h", "127.0.0.1", "-p", str(server.port), "-U", "postgres", "evalsite")
        manage("migrate", "--noinput", database_url=server.url)
        yield server
    finally:
        server.stop()
        shutil.rmtree(base, ignore_errors=True)


def manage(*args, database_url, env=None):
    """Run ``manage.py`` with ``args`` against ``database_url``; returns its standard output."""
    result = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT, env=child_env(DATABASE_URL=database_url, **(env or {})), capture_output=True, text=True,
    )  # fmt: skip
    if result.returncode:
        raise AssertionError(f"manage.py {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")
    return result.stdout


class PrivateRedis:
    def __init__(self, data_dir, port):
        self.data_dir, self.port = data_dir, port
        self.url = f"redis://127.0.0.1:{port}/0"
        self.process = None

    def start(self):
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", str(self.data_dir)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        wait_for(self.answers, timeout=20, what="the private redis-server")

    def stop(self):
        if self.process is not None:
            process_stop(self.process)
            self.process = None

    def answers(self):
        import redis

        try:
            return redis.Redis.from_url(self.url, socket_timeout=1).ping()
        except redis.RedisError:
            return False


@contextlib.contextmanager
def private_redis():
    """A ``redis-server`` of its own on a free port; yields ``PrivateRedis`` (started)."""
    base = Path(tempfile.mkdtemp(prefix="evalsite-redis-"))
    server = PrivateRedis(base, free_port())
    try:
        server.start()
        yield server
    finally:
        server.stop()
        shutil.rmtree(base, ignore_errors=True)


def until(predicate, *, timeout, interval=0.25):
    """Seconds until ``predicate()`` is true (``AssertionError`` after ``timeout``)."""
    started = time.monotonic()
    wait_for(predicate, timeout=timeout, interval=interval, what="recovery")
    return time.monotonic() - started
