import contextlib
import ctypes
import ctypes.util
import os
import signal
import subprocess
import sys
import time

from django.conf import settings
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Run the web server (gunicorn), one Celery worker and Celery beat together; Ctrl-C stops them all."

    def add_arguments(self, parser):
        parser.add_argument("--host", default=os.environ.get("EVALSITE_HOST", "127.0.0.1"))
        parser.add_argument("--port", type=int, default=int(os.environ.get("EVALSITE_PORT", "8000")))
        parser.add_argument("--web-workers", type=int, default=2)
        parser.add_argument("--worker-concurrency", type=int, default=2 if settings.REDIS_URL else 1)

    def handle(self, *args, host, port, web_workers, worker_concurrency, **options):
        python = sys.executable
        timeout = str(settings.EVALSITE_REQUEST_TIMEOUT_SECONDS + 30)
        commands = {
            "web": [python, "-m", "gunicorn", "evalsite.wsgi", "--bind", f"{host}:{port}", "--workers",
                    str(web_workers), "--threads", "4", "--worker-class", "gthread", "--timeout", timeout,
                    "--graceful-timeout", str(GRACEFUL_SECONDS)],
            "worker": [python, "-m", "celery", "-A", "evalsite", "worker", "--loglevel", "INFO",
                       "--concurrency", str(worker_concurrency), "--without-gossip", "--without-mingle"],
            # Beat sends the monitors' evaluation every minute (docs/monitors.md).
            "beat": [python, "-m", "celery", "-A", "evalsite", "beat", "--loglevel", "INFO"],
        }  # fmt: skip
        # SIGTERM (docker stop, systemd, kill) stops them all, as Ctrl-C does. SIGINT is
        # Python's own KeyboardInterrupt again, even when serve was started with it ignored
        # (by a shell's background job, or a parent that ignores it).
        signal.signal(signal.SIGTERM, _interrupt)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        stop_with_us = _stopped_with_parent(os.getpid())

        def start(name):
            # A process group of their own: Ctrl-C in the terminal reaches serve alone, which
            # then sends each one the single signal that stops it (_stop_all); otherwise the
            # worker would get SIGINT (a warm shutdown, finishing its tasks) and gunicorn two.
            # serve ran Django's system checks as it started: a worker (re)started by it skips
            # them, and is ready about a second sooner (BENCHMARKS.md, the soak).
            env = {**os.environ, "CELERY_SKIP_CHECKS": "1"} if name != "web" else None
            return subprocess.Popen(
                commands[name], cwd=settings.BASE_DIR, env=env, preexec_fn=stop_with_us, process_group=0
            )

        processes = {name: start(name) for name in commands}
        self.stdout.write(f"Serving on http://{host}:{port}/ with one Celery worker and beat. Ctrl-C stops them all.")
        exit_code = 0
        try:
            exit_code = self._supervise(processes, start)
        except KeyboardInterrupt:
            pass
        finally:
            _stop_all(processes)
        sys.exit(exit_code)

    def _supervise(self, processes, start):
        """Watch the processes until the web server exits (its exit code); a worker or beat that dies is restarted."""
        restarts = {name: Restarts() for name in RESTARTED}
        while True:
            for name, process in list(processes.items()):
                if process.poll() is None:
                    if name in restarts:
                        restarts[name].up()
                elif name not in restarts:
                    self.stderr.write(f"The {name} process exited with {process.returncode}; stopping.")
                    return process.returncode or 1
                elif restarts[name].due(f"The {name} process exited with {process.returncode}", self.stderr):
                    processes[name] = start(name)
            time.sleep(0.5)


# A worker or beat that dies is started again, the web server staying up; the web server
# itself dying stops everything (there is nothing left to serve).
RESTARTED = ("worker", "beat")
# Seconds before a restart: 1, doubling to 30 while it keeps dying; back to 1 once it has
# stayed up a minute.
FIRST_BACKOFF, MAX_BACKOFF, STABLE_SECONDS = 1.0, 30.0, 60.0


class Restarts:
    """When a process that died may be started again (backoff), and the line that says so."""

    def __init__(self):
        self.backoff, self.down_since, self.up_since = FIRST_BACKOFF, None, time.monotonic()

    def up(self):
        if time.monotonic() - self.up_since >= STABLE_SECONDS:
            self.backoff = FIRST_BACKOFF

    def due(self, what, out):
        now = time.monotonic()
        if self.down_since is None:
            self.down_since = now
            out.write(f"{what}; starting it again in {self.backoff:.0f} s.")
        if now - self.down_since < self.backoff:
            return False
        self.down_since, self.up_since = None, now
        self.backoff = min(self.backoff * 2, MAX_BACKOFF)
        return True


# Stopping: the web server finishes its requests for up to GRACEFUL_SECONDS; the worker
# stops at once (SIGQUIT, Celery's cold shutdown) rather than finishing every task it has
# taken, which on a pass took half a minute. Nothing is lost: the messages it took and
# did not finish go back to the broker, and a chunk it was scoring is sent again by the
# sweeper once its lease runs out (docs/architecture.md). Whatever is still up after
# STOP_SECONDS is killed: the worker's main process can linger seconds after its cold
# shutdown has put its messages back, with nothing left to do.
GRACEFUL_SECONDS, STOP_SECONDS = 5, 6
STOP_SIGNALS = {"worker": signal.SIGQUIT}


def _stop_all(processes):
    for name, process in processes.items():
        if process.poll() is None:
            process.send_signal(STOP_SIGNALS.get(name, signal.SIGTERM))
    deadline = time.monotonic() + STOP_SECONDS
    for process in processes.values():
        try:
            process.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        # What is left of its process group: a worker's pool children, which a cold
        # shutdown does not wait for and which outlive it on a loaded machine.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)


def _interrupt(signum, frame):
    raise KeyboardInterrupt


PR_SET_PDEATHSIG = 1


def _stopped_with_parent(parent_pid):
    """What a child runs before it starts, on Linux: it gets SIGTERM when this command dies.

    So a ``serve`` killed outright (SIGKILL, the OOM killer), which runs no cleanup,
    leaves no web server or worker behind. Elsewhere: None (nothing to run).
    """
    if not sys.platform.startswith("linux"):
        return None
    prctl = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True).prctl

    def ask_for_sigterm():
        prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != parent_pid:  # died before the request was made
            os.kill(os.getpid(), signal.SIGTERM)

    return ask_for_sigterm
