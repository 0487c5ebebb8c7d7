"""``manage.py serve`` (what ``make run`` starts): the web server and a worker together,
both stopped by one signal."""

import os
import signal
import subprocess
import sys
import urllib.request

from tests.live import ROOT, child_env, children_of, free_port, wait_for


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_serve_starts_the_web_server_and_a_worker_and_sigterm_stops_both(transactional_db, tmp_path):
    port = free_port()
    log = open(tmp_path / "serve.log", "w")  # noqa: SIM115 - closed below
    serve = subprocess.Popen(
        [sys.executable, "manage.py", "serve", "--port", str(port), "--web-workers", "1"],
        cwd=ROOT, env=child_env(), stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        wait_for(lambda: len(children_of(serve.pid)) == 2, timeout=30, what="the web and worker processes")
        web_and_worker = children_of(serve.pid)

        def answers():
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as response:
                    return response.status == 200
            except OSError:
                return False

        wait_for(answers, timeout=60, what="the web server")
        serve.send_signal(signal.SIGTERM)
        assert serve.wait(timeout=60) == 0
        wait_for(lambda: not any(_alive(pid) for pid in web_and_worker), timeout=10, what="both to exit")
    finally:
        if serve.poll() is None:
            serve.kill()
        for pid in children_of(serve.pid):
            os.kill(pid, signal.SIGKILL)
        log.close()
