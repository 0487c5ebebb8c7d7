"""Layer rules, checked on the real import graph (transitive imports included).

- Pure modules (scorers, the gate verdict, the evalgate client, the example agent)
  import nothing of Django, DRF or Celery, so they can be reasoned about and run alone.
- Models import no views, APIs, tasks or services: data does not depend on its users.
- Tasks stay thin: they import services, never models or the ORM directly.
"""

import importlib.util
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ["evalsite", "datasets", "scoring", "experiments", "client", "examples"]
FRAMEWORKS = ("django", "rest_framework", "celery", "kombu", "drf_spectacular")
PURE_PACKAGES = ["scoring.scorers", "experiments.verdict", "client", "examples"]


@pytest.fixture(scope="module")
def graph():
    present = [p for p in PACKAGES if importlib.util.find_spec(p) is not None]
    return grimp.build_graph(*present, include_external_packages=True)


def _modules(graph, package):
    if package not in graph.modules:
        return set()
    return {package} | graph.find_descendants(package) if graph.find_children(package) else {package}


def test_pure_modules_import_nothing_of_the_web_framework(graph):
    offenders = []
    for package in PURE_PACKAGES:
        for module in _modules(graph, package):
            for framework in FRAMEWORKS:
                if framework in graph.modules and graph.chain_exists(importer=module, imported=framework):
                    offenders.append(f"{module} -> {framework}: {graph.find_shortest_chain(module, framework)}")
    assert offenders == []


def test_models_import_no_views_apis_services_or_tasks(graph):
    users = [m for m in graph.modules if m.split(".")[-1] in ("views", "api", "tasks", "services", "page_urls", "urls")]
    offenders = [
        f"{model} -> {user}"
        for model in graph.modules
        if model.endswith(".models") and model.split(".")[0] in PACKAGES
        for user in users
        if graph.chain_exists(importer=model, imported=user)
    ]
    assert offenders == []


def test_tasks_call_services_and_touch_no_models_directly(graph):
    offenders = []
    for module in graph.modules:
        if module.split(".")[-1] == "tasks" and module.split(".")[0] in PACKAGES:
            imported = graph.find_modules_directly_imported_by(module)
            offenders += [f"{module} -> {m}" for m in imported if m.endswith(".models") or m.startswith("django.db")]
    assert offenders == []


def test_no_module_is_called_utils():
    assert [p for p in ROOT.glob("*/**/utils.py") if ".venv" not in p.parts] == []
