"""``manage.py serve`` (what ``make run`` starts): the web server, a worker and beat together,
all stopped by one signal, or when ``serve`` itself is killed."""

import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from tests.live import ROOT, child_env, children_of, free_port, wait_for


def _alive(pid):
    """Running: neither gone nor a zombie (an orphan waits for whoever adopted it to reap it)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _serve(port, tmp_path, *, env=None, own_session=False, log_name="serve.log", sigint_ignored=False):
    log = open(tmp_path / log_name, "w")  # noqa: SIM115 - closed by the caller
    serve = subprocess.Popen(
        [sys.executable, "manage.py", "serve", "--port", str(port), "--web-workers", "1"],
        cwd=ROOT, env=child_env(**(env or {})), stdout=log, stderr=subprocess.STDOUT,
        start_new_session=own_session,  # a terminal of its own: Ctrl-C reaches every process in it
        # As a shell starts a background job (`make run &`): SIGINT ignored on the way in.
        preexec_fn=(lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if sigint_ignored else None,
    )  # fmt: skip
    return serve, log


def _answers(port):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


def _cleaned_up(serve, pids, log):
    if serve.poll() is None:
        serve.kill()
    for pid in {*pids, *children_of(serve.pid)}:
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)
    log.close()


def test_serve_starts_the_web_server_a_worker_and_beat_and_sigterm_stops_them_all(transactional_db, tmp_path):
    port = free_port()
    serve, log = _serve(port, tmp_path)
    web_and_worker = []
    try:
        wait_for(lambda: len(children_of(serve.pid)) == 3, timeout=30, what="the web, worker and beat processes")
        web_and_worker = children_of(serve.pid)

        wait_for(lambda: _answers(port), timeout=60, what="the web server")
        serve.send_signal(signal.SIGTERM)
        assert serve.wait(timeout=60) == 0
        wait_for(lambda: not any(_alive(pid) for pid in web_and_worker), timeout=10, what="all to exit")
    finally:
        _cleaned_up(serve, web_and_worker, log)


def test_ctrl_c_stops_serve_even_when_it_was_started_with_sigint_ignored(transactional_db, tmp_path):
    serve, log = _serve(free_port(), tmp_path, own_session=True, sigint_ignored=True)
    children = []
    try:
        wait_for(lambda: len(children_of(serve.pid)) == 3, timeout=30, what="the web, worker and beat processes")
        children = children_of(serve.pid)
        os.killpg(serve.pid, signal.SIGINT)
        serve.wait(timeout=30)
        wait_for(lambda: not any(_alive(pid) for pid in children), timeout=10, what="all to exit")
    finally:
        _cleaned_up(serve, children, log)


def test_serve_killed_outright_leaves_no_web_server_worker_or_beat_behind(transactional_db, tmp_path):
    serve, log = _serve(free_port(), tmp_path)
    web_and_worker = []
    try:
        wait_for(lambda: len(children_of(serve.pid)) == 3, timeout=30, what="the web, worker and beat processes")
        web_and_worker = children_of(serve.pid)
        serve.kill()  # SIGKILL: serve runs no cleanup of its own
        serve.wait(timeout=10)
        wait_for(lambda: not any(_alive(pid) for pid in web_and_worker), timeout=60, what="all to exit")
    finally:
        _cleaned_up(serve, web_and_worker, log)


def _cmdline(pid):
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def test_a_worker_killed_outright_is_started_again_and_the_site_answers_throughout(transactional_db, tmp_path):
    port = free_port()
    serve, log = _serve(port, tmp_path)
    seen = []
    try:
        wait_for(lambda: len(children_of(serve.pid)) == 3, timeout=30, what="the web, worker and beat processes")
        seen = children_of(serve.pid)
        worker = next(pid for pid in seen if " worker " in _cmdline(pid))

        wait_for(lambda: _answers(port), timeout=60, what="the web server")
        os.kill(worker, signal.SIGKILL)
        restarted = wait_for(
            lambda: [p for p in children_of(serve.pid) if " worker " in _cmdline(p) and p != worker] or None,
            timeout=5,
            interval=0.1,
            what="a new worker within 5 s",
        )
        seen += restarted
        assert _answers(port) and serve.poll() is None
        serve.send_signal(signal.SIGTERM)
        assert serve.wait(timeout=60) == 0
        log.flush()
        assert "The worker process exited with -9; starting it again in 1 s." in (tmp_path / "serve.log").read_text()
    finally:
        _cleaned_up(serve, seen, log)


def test_ctrl_c_with_a_pass_running_stops_everything_within_10_s_and_the_pass_completes_after_a_restart(
    transactional_db, actors, tmp_path
):
    from scoring.models import PassStatus, ScoringPass
    from scoring.passes.services import pass_start
    from tests.scoring.test_worker_crash import _runs_create

    _runs_create(actors.acme, 3000)
    env = {"EVALSITE_QUEUE": f"serve-{os.getpid()}-{free_port()}", "EVALSITE_CHUNK_LEASE_SECONDS": 5}
    serve, log = _serve(free_port(), tmp_path, env=env, own_session=True)
    seen = []
    try:
        wait_for(lambda: len(children_of(serve.pid)) == 3, timeout=30, what="the web, worker and beat processes")
        scoring_pass = pass_start(
            project=actors.acme, data={"scorers": ["answered", "exact_match"], "limit": 3000}, chunk_runs=200,
            queue=env["EVALSITE_QUEUE"],
        )  # fmt: skip
        wait_for(lambda: ScoringPass.objects.get(pk=scoring_pass.pk).done > 0, timeout=120, interval=0.05,
                 what="the pass to be under way")  # fmt: skip
        seen = [*children_of(serve.pid), *(c for p in children_of(serve.pid) for c in children_of(p))]
        os.killpg(serve.pid, signal.SIGINT)  # what Ctrl-C in the terminal sends
        started, gone = time.monotonic(), {}
        names = {pid: _cmdline(pid)[:80] for pid in seen}

        def all_gone():
            for pid in seen:
                if pid not in gone and not _alive(pid):
                    gone[pid] = time.monotonic() - started
            return serve.poll() is not None and len(gone) == len(seen)

        try:
            wait_for(all_gone, timeout=30, interval=0.05, what="every process to exit")
        except AssertionError as timed_out:
            left = [names[pid] for pid in seen if pid not in gone] + ([] if serve.poll() is not None else ["serve"])
            raise AssertionError(f"{timed_out}; still running: {left}") from None
        took = time.monotonic() - started
        exits = "\n".join(f"{gone[pid]:.1f} s {names[pid]}" for pid in seen)
        log.flush()
        output = (tmp_path / "serve.log").read_text()
        assert took < 10, f"stopping took {took:.1f} s:\n{exits}\n{output[-1500:]}"
        assert "SIGKILL" not in output
        assert ScoringPass.objects.get(pk=scoring_pass.pk).status != PassStatus.DONE, "nothing was left queued"
    finally:
        _cleaned_up(serve, seen, log)

    serve, log = _serve(free_port(), tmp_path, env=env, own_session=True, log_name="serve-again.log")
    try:
        wait_for(lambda: ScoringPass.objects.get(pk=scoring_pass.pk).status == PassStatus.DONE, timeout=240,
                 what="the pass to complete after the restart")  # fmt: skip
        assert ScoringPass.objects.get(pk=scoring_pass.pk).done == 3000
    finally:
        seen = [*children_of(serve.pid)]
        serve.send_signal(signal.SIGTERM)
        serve.wait(timeout=60)
        _cleaned_up(serve, seen, log)
