"""``requirements.txt`` alone runs the site and a worker on Redis.

A worker started on Redis loads kombu's Redis transport, which imports modules that no
runtime requirement used to bring (``packaging``): a production install's worker
exited at once while the dev requirements hid it. Here a child process loads what a
worker on Redis loads, and every distribution it imported must be in the closure of
``requirements.txt`` (its pins and what they require, extras and markers applied).
``.ci/run`` also builds a venv from ``requirements.txt`` only and starts a worker on it.
"""

import importlib.metadata as metadata
import json
import subprocess
import sys

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.live import ROOT, child_env

# Run in a child whose imports of anything requirements.txt does not install fail, as
# they would in a production install: optional imports (``try: import greenlet``) are
# skipped as there, and a missing required one stops the load.
LOADS_A_REDIS_WORKER = """
import importlib.abc, json, os, sys

class NotInstalled(importlib.abc.MetaPathFinder):
    blocked = set(json.loads(os.environ["NOT_INSTALLED"]))

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in self.blocked:
            raise ModuleNotFoundError(f"No module named {name!r} (not in requirements.txt)", name=name)
        return None

sys.meta_path.insert(0, NotInstalled())
import django
django.setup()
from evalsite.celery import app
app.loader.import_default_modules()
import celery.apps.worker, celery.worker.consumer
app.connection_for_write().transport  # kombu's Redis transport, as a worker's consumer loads it
print("loaded", type(app.connection_for_write().transport).__module__)
"""


def _requirements(path):
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line and not line.startswith("-"):
            yield Requirement(line)


def _closure(requirements):
    """Canonical names of the distributions these requirements install (as installed here)."""
    seen, stack = set(), [(r, set(r.extras)) for r in requirements]
    while stack:
        requirement, extras = stack.pop()
        name = canonicalize_name(requirement.name)
        key = (name, frozenset(extras))
        if key in seen:
            continue
        seen.add(key)
        for line in metadata.requires(name) or []:
            dependency = Requirement(line)
            marker = dependency.marker
            if marker is None or any(marker.evaluate({"extra": extra}) for extra in extras | {""}):
                stack.append((dependency, set(dependency.extras)))
    return {name for name, _ in seen}


def _top_level_names(dist):
    names = set()
    for file in dist.files or []:
        top = file.parts[0]
        if ".dist-info" in top or ".egg-info" in top or top in ("..", "__pycache__") or top.endswith(".pth"):
            continue
        names.add(top.removesuffix(".py") if len(file.parts) == 1 else top)
    return names


def _not_installed_modules(installed):
    """Top-level modules present here that only distributions outside ``installed`` provide."""
    owned, allowed = set(), set()
    for dist in metadata.distributions():
        names = _top_level_names(dist)
        (allowed if canonicalize_name(dist.metadata["Name"]) in installed else owned).update(names)
    return sorted(owned - allowed)


def test_a_worker_on_redis_loads_with_only_what_requirements_txt_installs():
    installed = _closure(_requirements(ROOT / "requirements.txt"))
    assert "kombu" in installed and "redis" in installed
    env = child_env(REDIS_URL="redis://127.0.0.1:6379/0", NOT_INSTALLED=json.dumps(_not_installed_modules(installed)))
    result = subprocess.run(
        [sys.executable, "-c", LOADS_A_REDIS_WORKER], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, (
        f"a worker on Redis cannot load from requirements.txt alone:\n{result.stderr[-2000:]}"
    )
    assert "kombu.transport.redis" in result.stdout
