"""The house's rules, checked on the real import graph (docs/architecture.md).

- Layers run one way: ``web`` → ``harvest`` → ``lifecycle`` → ``monitors`` → ``online`` → ``gating`` → ``scoring`` →
  ``datasets`` →
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
import re
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parent.parent
LAYERS = ["web", "harvest", "lifecycle", "monitors", "online", "gating", "scoring", "datasets", "evalsite", "checks"]
OUTSIDE = ["evalgate", "examples"]
# Where each top-level package lives, when not in a folder of its own name.
FOLDERS = {"evalgate": "client/evalgate"}
FRAMEWORKS = ("django", "rest_framework", "celery", "kombu", "drf_spectacular")
PURE_PACKAGES = ["checks", *OUTSIDE]
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 60


# Inside ``scoring``, its families from top to bottom: the passes (workers, the request's
# scoring, summaries), human review (the queue, the capture guard), what a request may
# select (scorers, runs, the gate's outcomes), the judge, the pipeline a pass runs
# (load, score, write), and the records every family reads and writes. Entry points
# (``tasks``, ``admin``) sit above them all.
SCORING_FLOORS = [
    "passes",
    "review",
    "selection",
    "judge",
    "pipeline",
    "selectors",
    {"feedback", "labels"},
    {"score_configs", "freshness"},
    "models",
]


def graph_build(packages):
    """The import graph of ``packages``; one that cannot be imported fails, never passes unchecked."""
    missing = [p for p in packages if importlib.util.find_spec(p) is None]
    assert missing == [], f"not importable, so its rules would pass unchecked: {missing}"
    return grimp.build_graph(*packages, include_external_packages=True)


@pytest.fixture(scope="module")
def graph():
    return graph_build([*LAYERS, *OUTSIDE])


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


def test_scoring_families_import_down_only(graph):
    illegal = graph.find_illegal_dependencies_for_layers(layers=SCORING_FLOORS, containers={"scoring"})
    assert sorted(f"{d.importer} -> {d.imported}" for d in illegal) == []


def test_an_upward_import_inside_scoring_is_reported():
    graph = grimp.build_graph("scoring")
    graph.add_import(importer="scoring.pipeline.engine", imported="scoring.passes.services")
    illegal = graph.find_illegal_dependencies_for_layers(layers=SCORING_FLOORS, containers={"scoring"})
    assert [(d.importer, d.imported) for d in illegal] == [("scoring.pipeline", "scoring.passes")]


def test_a_missing_package_fails_the_house_rules():
    with pytest.raises(AssertionError, match="no_such_layer"):
        graph_build(["checks", "no_such_layer"])


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
        return len(group) == 2 and len(tasks) == 1 and group[0].split(".")[0] == group[1].split(".")[0]

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


def _doc(name):
    return (ROOT / name).read_text()


def test_the_architecture_doc_names_only_modules_that_exist():
    text = _doc("docs/architecture.md")
    paths = re.findall(r"`((?:[a-z_]+/)+[a-z_]+\.py)`", text)
    missing = [p for p in paths if (ROOT / p.split("/")[0]).is_dir() and not (ROOT / p).exists()]
    for row in re.findall(r"^\| `([a-z]+)`[^|]*\|(.*)$", text, flags=re.MULTILINE):
        app, cells = row
        own = [p for p in re.findall(r"`((?:[a-z_]+/)*[a-z_]+\.py)`", cells) if not (ROOT / p.split("/")[0]).is_dir()]
        names = {p.rsplit("/", 1)[-1] for p in own}
        present = {p.name for p in (ROOT / app).rglob("*.py")}
        missing += [f"{app}: {name}" for name in sorted(names - present)]
    assert missing == []


def test_the_architecture_doc_names_every_model():
    text = _doc("docs/architecture.md")
    models = [
        f"{path.parent.name}.{name}"
        for package in LAYERS
        for path in [ROOT / package / "models.py"]
        if path.exists()
        for name in re.findall(r"^class (\w+)\(models\.Model\):", path.read_text(), flags=re.MULTILINE)
    ]
    assert [m for m in models if not re.search(rf"\b{m.split('.')[1]}\b", text)] == []


def test_the_readme_layout_names_every_package():
    layout = _doc("README.md").split("## Layout", 1)[1].split("```")[1]
    listed = set(re.findall(r"^([a-z_]+)/", layout, flags=re.MULTILINE))
    assert set(LAYERS) - listed == set()
    assert [d for d in sorted(listed) if not (ROOT / d).is_dir()] == []


def test_the_architecture_doc_names_every_module_of_the_apps():
    """Each module of an app (its folder named, as ``otlp/``, covers the folder's modules)."""
    text = _doc("docs/architecture.md")
    unnamed = []
    for app in [p for p in LAYERS if p not in ("web", "checks")]:
        for path in (ROOT / app).rglob("*.py"):
            parts = path.relative_to(ROOT / app).parts
            if "migrations" in parts or "management" in parts or path.name in ("__init__.py", "apps.py", "wsgi.py"):
                continue
            folder_named = len(parts) > 1 and f"`{parts[0]}/`" in text
            if not folder_named and not re.search(rf"\b{re.escape(path.name)}\b", text):
                unnamed.append(f"{app}/{'/'.join(parts)}")
    assert unnamed == []


# What only the ORM answers: a manager (``Model.objects``), the database package, or a
# queryset's own methods (no list, dict or string of the web layer has these names).
ORM_MODULES = ("django.db",)
QUERYSET_METHODS = {
    "aggregate", "all", "annotate", "bulk_create", "defer", "exclude", "exists", "filter", "get_or_create",
    "only", "order_by", "prefetch_related", "select_for_update", "select_related", "update_or_create",
    "values_list",
}  # fmt: skip


def orm_uses(source, name="<source>"):
    """Each use of the ORM in ``source``, as ``name:line what``: the web layer asks selectors and services."""
    uses = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            uses += [f"{name}:{node.lineno} import {a.name}" for a in node.names if a.name.startswith(ORM_MODULES)]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith(ORM_MODULES):
            uses.append(f"{name}:{node.lineno} from {node.module} import")
        elif isinstance(node, ast.Attribute) and node.attr == "objects":
            uses.append(f"{name}:{node.lineno} .objects")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in QUERYSET_METHODS:
            uses.append(f"{name}:{node.lineno} .{node.func.attr}()")
    return sorted(uses)


def _web_sources():
    return sorted((ROOT / "web").rglob("*.py"))


def test_web_asks_selectors_and_services_and_uses_no_orm():
    uses = [use for path in _web_sources() for use in orm_uses(path.read_text(), str(path.relative_to(ROOT)))]
    assert uses == []


def test_an_orm_query_in_a_page_is_reported_with_its_line():
    source = (ROOT / "web/pages/home.py").read_text()
    assert orm_uses(source) == []
    planted = source + "\n\ndef planted(project):\n    return Trace.objects.filter(project=project)\n"
    line = planted.count("\n")
    assert orm_uses(planted, "web/pages/home.py") == [
        f"web/pages/home.py:{line} .filter()",
        f"web/pages/home.py:{line} .objects",
    ]


def test_a_transaction_or_a_related_manager_in_a_page_is_reported():
    source = "from django.db import transaction\n\ndef page(request):\n    return request.user.memberships.select_related('p')\n"
    assert orm_uses(source) == ["<source>:1 from django.db import", "<source>:4 .select_related()"]


# The one module that knows which database is in use (``evalsite/vendor.py``); migrations
# are frozen history and keep their own checks.
VENDOR_MODULE = "evalsite/vendor.py"


def vendor_reads(source, name="<source>"):
    """Each read of ``<connection>.vendor`` in ``source``, as ``name:line``."""
    return [f"{name}:{node.lineno}" for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Attribute) and node.attr == "vendor"]  # fmt: skip


def test_only_the_vendor_module_asks_which_database_is_in_use():
    reads = [
        read
        for path in _project_sources()
        if str(path.relative_to(ROOT)) != VENDOR_MODULE
        for read in vendor_reads(path.read_text(), str(path.relative_to(ROOT)))
    ]
    assert reads == []
    assert vendor_reads((ROOT / VENDOR_MODULE).read_text()) != []


def test_a_vendor_check_outside_the_vendor_module_is_reported():
    planted = "from django.db import connection\n\nCOPY = connection.vendor == 'postgresql'\n"
    assert vendor_reads(planted, "gating/comparison.py") == ["gating/comparison.py:3"]
