"""Soak: ``manage.py serve`` as ``make run`` starts it, under a storm of scoring passes.

Starts ``serve`` on a free port with a fresh var dir (the embedded SQLite database and
the filesystem broker, no Redis), loads the demo (``demo_setup``), stores ``--runs``
runs in an experiment of their own, then for ``--minutes``:

- every ``--every`` seconds stores a few new runs and asks for a scoring pass over the
  experiment through ``POST /v1/api/passes``, and follows every pass to its end;
- polls ``/healthz`` every second (an answer other than 200, or none within 5 s, is a
  failure; the longest gap between two good answers is reported);
- reads serve's output for worker and beat restarts ("The worker process exited");
- at ``--kill-at`` seconds kills the Celery worker outright (SIGKILL to its pool
  children, then to it) and measures the time until serve has a new worker process
  running, until that worker is ready, and until a pass asked for after the kill is
  done;
- samples the worker's resident memory every 30 s.

    .venv/bin/python bench/soak.py [--minutes 30] [--every 5] [--runs 2000] [--kill-at 900]

It prints a JSON report and the lines for BENCHMARKS.md; it exits 1 when a worker died
besides the one it killed, the new worker was not running within 5 s, a pass asked for
after the kill was not done within 5 s of it, or /healthz failed.
"""

import argparse
import json
import os
import platform
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.ingest import run_payloads  # noqa: E402
from tests.live import children_of, free_port  # noqa: E402

SCORERS = ["contains", "latency_budget", "cost_budget", "tool_efficiency", "span_present", "tool_succeeded"]
CONFIG = {
    "contains": {"value": "EUR"},
    "latency_budget": {"ms": 2000},
    "cost_budget": {"cents": 0.05},
    "tool_efficiency": {"max_calls": 3},
    "span_present": {"kind": "tool", "name": "quote_room"},
    "tool_succeeded": {"tool": "quote_room"},
}
EXPERIMENT = "soak"


class Client:
    def __init__(self, base, key):
        self.base, self.key = base, key

    def call(self, method, path, body=None, timeout=30):
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.base + path, data=data, method=method)
        request.add_header("Authorization", f"Bearer {self.key}")
        request.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, json.loads(response.read() or b"null")

    def store(self, count, offset):
        runs = run_payloads(count, offset)
        for run in runs:
            run["trace_id"], run["experiment"] = f"soak-{run['trace_id']}", EXPERIMENT
        for i in range(0, len(runs), 500):
            self.call("POST", "/v1/api/traces", {"traces": runs[i : i + 500]}, timeout=120)

    def pass_request(self):
        _, body = self.call("POST", "/v1/api/passes", {"scorers": SCORERS, "config": CONFIG, "experiment": EXPERIMENT})
        return body["id"]


def django_command(env, *args):
    subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, check=True, capture_output=True)


def is_worker(pid):
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return b"celery" in cmdline and b"worker" in cmdline


def worker_pid(serve_pid):
    """The Celery worker's main process (serve's child), or None."""
    return next((pid for pid in children_of(serve_pid) if is_worker(pid)), None)


def rss_kib(pid):
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return None


class Health(threading.Thread):
    """Polls /healthz every second; counts failures and the longest gap between good answers."""

    def __init__(self, base):
        super().__init__(daemon=True)
        self.base, self.stop, self.polls, self.failures = base, threading.Event(), 0, []
        self.last_ok, self.longest_gap = time.monotonic(), 0.0

    def run(self):
        while not self.stop.wait(1.0):
            self.polls += 1
            started, error = time.monotonic(), None
            try:
                with urllib.request.urlopen(self.base + "/healthz", timeout=5) as response:
                    ok = response.status == 200
            except (OSError, urllib.error.HTTPError) as exc:
                ok, error = False, repr(exc)
            if ok:
                self.longest_gap = max(self.longest_gap, time.monotonic() - self.last_ok)
                self.last_ok = time.monotonic()
            else:
                self.failures.append({"at": round(started, 1), "error": error})


class Passes:
    """The passes asked for and how they ended."""

    def __init__(self, client):
        self.client, self.open, self.ended = client, {}, {}

    def ask(self):
        pass_id = self.client.pass_request()
        self.open[pass_id] = time.monotonic()
        return pass_id

    def follow(self):
        for pass_id, asked in list(self.open.items()):
            _, body = self.client.call("GET", f"/v1/api/passes/{pass_id}")
            if body["status"] in ("done", "failed"):
                self.ended[pass_id] = {
                    "status": body["status"],
                    "seconds": time.monotonic() - asked,
                    "at": time.monotonic(),
                }
                del self.open[pass_id]


def serve_start(env, port, var):
    log = open(var / "serve.log", "w")  # noqa: SIM115 - closed by the caller
    process = subprocess.Popen(
        [sys.executable, "manage.py", "serve", "--port", str(port)],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, process_group=0,
    )  # fmt: skip
    return process, log


def wait_for(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise SystemExit(f"timed out waiting for {what}")


def worker_ready_count(var):
    return len(re.findall(r"@\S+ ready\.", (var / "serve.log").read_text(errors="replace")))


def kill_worker(serve, var, passes):
    """kill -9 the worker; the seconds until a new one runs, is ready, and a later pass is done."""
    old = worker_pid(serve.pid)
    ready_before = worker_ready_count(var)
    killed = time.monotonic()
    for child in children_of(old):
        os.kill(child, signal.SIGKILL)
    os.kill(old, signal.SIGKILL)
    new = wait_for(lambda: (pid := worker_pid(serve.pid)) and pid != old and pid, 60, "a new worker")
    running = time.monotonic() - killed
    wait_for(lambda: worker_ready_count(var) > ready_before, 60, "the new worker to be ready")
    ready = time.monotonic() - killed
    pass_id = passes.ask()

    def done():
        passes.follow()
        return pass_id in passes.ended

    wait_for(done, 120, "a pass after the kill")
    return {
        "killed_pid": old,
        "new_pid": new,
        "new_worker_running_s": round(running, 2),
        "new_worker_ready_s": round(ready, 2),
        "pass_after_kill_done_s": round(time.monotonic() - killed, 2),
        "pass_after_kill_status": passes.ended[pass_id]["status"],
    }


def storm(args, client, serve, var):
    passes, health, memory = Passes(client), Health(client.base), []
    health.start()
    started = time.monotonic()
    end, kill_at, offset, last_sample, kill = started + args.minutes * 60, started + args.kill_at, args.runs, 0, None
    while time.monotonic() < end:
        tick = time.monotonic()
        if kill is None and tick >= kill_at:
            kill = kill_worker(serve, var, passes)
            continue
        client.store(args.new_runs, offset)
        offset += args.new_runs
        passes.ask()
        passes.follow()
        if tick - last_sample >= 30:
            pid = worker_pid(serve.pid)
            memory.append({"t": round(tick - started), "worker_rss_kib": rss_kib(pid) if pid else None})
            last_sample = tick
        time.sleep(max(0.0, args.every - (time.monotonic() - tick)))
    wait_for(lambda: passes.follow() or not passes.open, 300, "the last passes")
    health.stop.set()
    health.join()
    return passes, health, memory, kill, offset


def report(args, passes, health, memory, kill, stored, var):
    log = (var / "serve.log").read_text(errors="replace")
    worker_exits, beat_exits = log.count("The worker process exited"), log.count("The beat process exited")
    seconds = sorted(p["seconds"] for p in passes.ended.values())
    rss = [m["worker_rss_kib"] for m in memory if m["worker_rss_kib"]]
    result = {
        "minutes": args.minutes,
        "runs_stored": stored,
        "passes_asked": len(passes.ended) + len(passes.open),
        "passes_done": sum(p["status"] == "done" for p in passes.ended.values()),
        "passes_failed": sum(p["status"] == "failed" for p in passes.ended.values()),
        "pass_seconds_median": round(seconds[len(seconds) // 2], 2) if seconds else None,
        "pass_seconds_max": round(seconds[-1], 2) if seconds else None,
        "worker_exits_seen": worker_exits,
        "worker_deaths_besides_killed": worker_exits - (1 if kill else 0),
        "beat_exits_seen": beat_exits,
        "healthz_polls": health.polls,
        "healthz_failures": len(health.failures),
        "healthz_longest_gap_s": round(health.longest_gap, 2),
        "worker_rss_kib_first_last_max": [rss[0], rss[-1], max(rss)] if rss else None,
        "kill": kill,
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "load_before": os.getloadavg(),
    }
    ok = (
        result["worker_deaths_besides_killed"] == 0
        and not health.failures
        and kill
        and kill["new_worker_running_s"] < 5
        and kill["pass_after_kill_done_s"] < 5
        and kill["pass_after_kill_status"] == "done"
        and result["passes_failed"] == 0
    )
    return result, ok


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=30)
    parser.add_argument("--every", type=float, default=5, help="seconds between two passes")
    parser.add_argument("--runs", type=int, default=2000, help="runs stored before the storm")
    parser.add_argument("--new-runs", type=int, default=20, help="runs stored before each pass")
    parser.add_argument("--kill-at", type=float, default=None, help="seconds in (default: half way)")
    args = parser.parse_args()
    args.kill_at = args.minutes * 30 if args.kill_at is None else args.kill_at
    var, port = Path(tempfile.mkdtemp(prefix="evalsite-soak-")), free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update(EVALSITE_VAR_DIR=str(var), DJANGO_SETTINGS_MODULE="evalsite.settings", PYTHONUNBUFFERED="1")
    django_command(env, "migrate", "--noinput")
    django_command(env, "demo_setup", "--url", f"http://127.0.0.1:{port}/")
    key = json.loads((var / "demo.json").read_text())["api_key"]
    load = os.getloadavg()
    serve, log = serve_start(env, port, var)
    client = Client(f"http://127.0.0.1:{port}", key)
    try:
        wait_for(lambda: _answers(client.base + "/healthz"), 60, "serve")
        wait_for(lambda: worker_ready_count(var) > 0, 60, "the worker")
        client.store(args.runs, 0)
        passes, health, memory, kill, stored = storm(args, client, serve, var)
    finally:
        serve.send_signal(signal.SIGTERM)
        serve.wait(timeout=30)
        log.close()
    result, ok = report(args, passes, health, memory, kill, stored, var)
    result["load_before"], result["var_dir"] = load, str(var)
    print(json.dumps(result, indent=2))
    sys.exit(0 if ok else 1)


def _answers(url):
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


if __name__ == "__main__":
    main()
