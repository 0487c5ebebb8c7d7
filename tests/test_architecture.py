"""The house's rules, checked on the real import graph (docs/architecture.md).

- Layers run one way: ``web`` → ``harvest`` → ``monitors`` → ``online`` → ``experiments`` → ``scoring`` → ``datasets`` →
  ``evalsite`` → ``checks``. A module imports only from its own layer and the layers
  below; an import that points up fails here with the importing line.
- Pure modules (``checks``, the ``evalgate`` client package, the example agent) import
  nothing of Django, DRF or Celery, and the client and the example nothing of the server.
- No import cycle between modules, except a service that enqueues its own app's task
  (the task imports the service; the service imports the task where it enqueues).
- Models import no views, APIs, tasks or services; tasks touch no models directly.
- No module over 500 lines and no function over 60: one job each, readable on a screen.
"""

import ast
import importlib.util
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parent.parent
LAYERS = ["web", "harvest", "monitors", "online", "experiments", "scoring", "datasets", "evalsite", "checks"]
OUTSIDE = ["evalgate", "examples"]
# Where each top-level package lives, when not in a folder of its own name.
FOLDERS = {"evalgate": "client/evalgate"}
FRAMEWORKS = ("django", "rest_framework", "celery", "kombu", "drf_spectacular")
PURE_PACKAGES = ["checks", *OUTSIDE]
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 60


@pytest.fixture(scope="module")
def graph():
    present = [p for p in [*LAYERS, *OUTSIDE] if importlib.util.find_spec(p) is not None]
    return grimp.build_graph(*present, include_external_packages=True)


def layer_violations(graph):
    """Every import that runs up the layers, as ``importer:line imports imported``."""
    lines = []
    for dependency in graph.find_illegal_dependencies_for_layers(layers=LAYERS):
        for route in dependency.routes:
            importer, imported = route.heads, route.tails
            for head in sorted(importer):
                for tail in sorted(imported):
                    for middle in [route.middle] if route.middle else [()]:
                        first = middle[0] if middle else tail
                        for detail in graph.get_import_details(importer=head, imported=first):
                            lines.append(
                                f"{head}:{detail['line_number']} imports {first} "
                                f"({dependency.importer} may not depend on {dependency.imported})"
                            )
    return sorted(set(lines))


def test_no_import_runs_up_the_layers(graph):
    assert layer_violations(graph) == []


def test_an_upward_import_is_reported_with_its_line():
    graph = grimp.build_graph(*LAYERS)
    graph.add_import(importer="datasets.run_selectors", imported="scoring.models", line_number=7, line_contents="x")
    assert "datasets.run_selectors:7 imports scoring.models (datasets may not depend on scoring)" in layer_violations(
        graph
    )


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


def test_the_client_and_the_example_import_nothing_of_the_server(graph):
    offenders = [
        f"{module} -> {layer}"
        for package in OUTSIDE
        for module in _modules(graph, package)
        for layer in LAYERS
        if layer in graph.modules and graph.chain_exists(importer=module, imported=layer, as_packages=True)
    ]
    assert offenders == []


def import_cycles(graph):
    """Groups of project modules that import each other in a loop (strongly connected components)."""
    modules = sorted(m for m in graph.modules if m.split(".")[0] in (*LAYERS, *OUTSIDE))
    edges = {m: [i for i in graph.find_modules_directly_imported_by(m) if i in set(modules)] for m in modules}
    index, low, on_stack, stack, cycles = {}, {}, set(), [], []

    def visit(root):
        work = [(root, iter(edges[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(edges[child])))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        cycles.append(sorted(group))

    for module in modules:
        if module not in index:
            visit(module)
    return cycles


def test_no_import_cycle_but_a_service_enqueueing_its_own_task(graph):
    def allowed(group):
        tasks = [m for m in group if m.endswith(".tasks")]
        return len(group) == 2 and len(tasks) == 1 and group[0].rsplit(".", 1)[0] == group[1].rsplit(".", 1)[0]

    assert [group for group in import_cycles(graph) if not allowed(group)] == []


def test_models_import_no_views_apis_services_or_tasks(graph):
    users = [m for m in graph.modules if m.split(".")[-1] in ("views", "api", "tasks", "services", "urls")]
    users += [m for m in graph.modules if m.startswith("web")]
    offenders = [
        f"{model} -> {user}"
        for model in graph.modules
        if model.endswith(".models") and model.split(".")[0] in LAYERS
        for user in users
        if graph.chain_exists(importer=model, imported=user)
    ]
    assert offenders == []


def test_tasks_call_services_and_touch_no_models_directly(graph):
    offenders = []
    for module in graph.modules:
        if module.split(".")[-1] == "tasks" and module.split(".")[0] in LAYERS:
            imported = graph.find_modules_directly_imported_by(module)
            offenders += [f"{module} -> {m}" for m in imported if m.endswith(".models") or m.startswith("django.db")]
    assert offenders == []


def _project_sources():
    for package in [*LAYERS, *OUTSIDE, "bench", "client"]:
        for path in (ROOT / FOLDERS.get(package, package)).rglob("*.py"):
            if "migrations" not in path.parts:
                yield path


def test_no_module_is_called_utils():
    assert [p for p in _project_sources() if p.name == "utils.py"] == []


def test_no_module_is_over_the_size_of_one_job():
    sizes = {str(p.relative_to(ROOT)): p.read_text().count("\n") for p in _project_sources()}
    assert {path: lines for path, lines in sizes.items() if lines > MAX_MODULE_LINES} == {}


def test_no_function_is_longer_than_a_screen():
    long = []
    for path in _project_sources():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({lines} lines)")
    assert long == []
