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
                    str(web_workers), "--threads", "4", "--worker-class", "gthread", "--timeout", timeout],
            "worker": [python, "-m", "celery", "-A", "evalsite", "worker", "--loglevel", "INFO",
                       "--concurrency", str(worker_concurrency), "--without-gossip", "--without-mingle"],
            # Beat sends the monitors' evaluation every minute (docs/monitors.md).
            "beat": [python, "-m", "celery", "-A", "evalsite", "beat", "--loglevel", "INFO"],
        }  # fmt: skip
        # SIGTERM (docker stop, systemd, kill) stops them all, as Ctrl-C does.
        signal.signal(signal.SIGTERM, _interrupt)
        stop_with_us = _stopped_with_parent(os.getpid())
        processes = {
            name: subprocess.Popen(cmd, cwd=settings.BASE_DIR, preexec_fn=stop_with_us)
            for name, cmd in commands.items()
        }
        self.stdout.write(f"Serving on http://{host}:{port}/ with one Celery worker and beat. Ctrl-C stops them all.")
        exit_code = 0
        try:
            while True:
                for name, process in processes.items():
                    if process.poll() is not None:
                        self.stderr.write(f"The {name} process exited with {process.returncode}; stopping.")
                        exit_code = process.returncode or 1
                        raise KeyboardInterrupt
                time.sleep(0.5)
        except KeyboardInterrupt:
            pass
        finally:
            for process in processes.values():
                if process.poll() is None:
                    process.send_signal(signal.SIGTERM)
            for process in processes.values():
                try:
                    process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    process.kill()
        sys.exit(exit_code)


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
