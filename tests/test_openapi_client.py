"""A client generated from the served schema works: openapi-python-client, against a live server.

The schema is read from the running server, the client generated into a temporary
folder and imported; it lists runs page by page, imports a golden set as JSONL, asks
the gate and reads an error, all as typed objects.
"""

import importlib
import os
import subprocess
import sys
import urllib.request
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from evalgate import Tracer
from evalsite.projects import api_key_create, project_create
from evalsite.scopes import ADMIN
from examples.reservo import GOLDEN_CASES_PATH, load_golden_cases
from examples.reservo.tracing import case_trace
from tests.live import web_server

PACKAGE = "evalsite_api_client"


@pytest.fixture(scope="module")
def live_url(django_db_setup):
    with web_server(workers=1) as url:
        yield url


@pytest.fixture(scope="module")
def generated(live_url, tmp_path_factory):
    """The client package generated from the live server's schema, imported."""
    folder = tmp_path_factory.mktemp("generated")
    with urllib.request.urlopen(f"{live_url}/v1/api/schema/?format=json", timeout=30) as response:
        (folder / "schema.json").write_bytes(response.read())
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    result = subprocess.run(
        [Path(sys.executable).parent / "openapi-python-client", "generate", "--path", "schema.json",
         "--meta", "none", "--output-path", PACKAGE],
        cwd=folder, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    sys.path.insert(0, str(folder))
    try:
        yield importlib.import_module(PACKAGE), result.stdout
    finally:
        sys.path.remove(str(folder))
        for name in [m for m in sys.modules if m == PACKAGE or m.startswith(PACKAGE + ".")]:
            del sys.modules[name]


@pytest.fixture
def api(live_url, transactional_db, generated):
    project = project_create(slug="generated", name="Generated")
    _, key = api_key_create(project=project, name="ci", scopes=[ADMIN])
    package, _ = generated
    return package.AuthenticatedClient(base_url=live_url, token=key, raise_on_unexpected_status=True), key


def op(group, name):
    return importlib.import_module(f"{PACKAGE}.api.{group}.{name}")


def model(name):
    return getattr(importlib.import_module(f"{PACKAGE}.models"), name)


def test_the_generator_leaves_out_no_json_endpoint(generated):
    _, log = generated

    skipped = [line for line in log.splitlines() if "will not be generated" in line or "Unable to" in line]
    assert skipped == []
    for group, name in [("traces", "traces_list"), ("datasets", "datasets_import"), ("gate", "gate"),
                        ("gate_runs", "gate_runs_retrieve"), ("otlp", "otlp_traces_export"),
                        ("otlp", "otlp_logs_export")]:  # fmt: skip
        assert callable(op(group, name).sync)


def test_it_lists_runs_through_the_generated_client_page_by_page(api):
    client, key = api
    tracer = Tracer(experiment="v1", dataset=None)
    for number in range(5):
        with tracer.run(f"run-{number}", input="q", started_at=f"2026-11-30T10:00:0{number}Z", latency_ms=5) as run:
            run.output = "a"
    created = op("traces", "traces_ingest").sync_detailed(
        client=client, body=model("TracesIngestBodyType1").from_dict({"traces": tracer.runs})
    )
    assert created.status_code == 201, created.content

    seen, cursor, pages = [], None, 0
    while True:
        page = op("traces", "traces_list").sync(client=client, page_size=2, **({"cursor": cursor} if cursor else {}))
        assert isinstance(page, model("PaginatedTraceList"))
        seen += [trace.trace_id for trace in page.results]
        pages += 1
        if not page.next_:  # the generator renames `next`, a Python builtin
            break
        cursor = parse_qs(urlsplit(page.next_).query)["cursor"][0]

    assert (pages, seen) == (3, [f"run-{n}" for n in (4, 3, 2, 1, 0)])


def test_it_imports_a_golden_set_and_asks_the_gate(api):
    client, _ = api
    op("datasets", "datasets_create").sync(client=client, body=model("DatasetInRequest")(name="reservo"))
    types = importlib.import_module(f"{PACKAGE}.types")
    with GOLDEN_CASES_PATH.open("rb") as fh:
        imported = op("datasets", "datasets_import").sync(client=client, name="reservo", body=types.File(payload=fh))
    assert imported.created == 5
    tracer = Tracer(experiment="v1", dataset="reservo")
    for case in load_golden_cases():
        case_trace(tracer, case, trace_id=f"v1-{case['name']}")
    op("traces", "traces_ingest").sync(
        client=client, body=model("TracesIngestBodyType1").from_dict({"traces": tracer.runs})
    )

    verdict = op("gate", "gate").sync(client=client, body=model("GateInRequest")(dataset="reservo", experiment="v1"))
    again = op("gate_runs", "gate_runs_retrieve").sync(client=client, gate_run_id=verdict.gate_run_id)

    assert isinstance(verdict, model("GateVerdict"))
    assert (verdict.verdict.value, verdict.passed_cases, verdict.total_cases) == ("PASS", 5, 5)
    assert [case.name for case in verdict.cases][0] == "quote_focus_pro_3h"
    assert verdict.cases[0].actual_tools == ["quote_room"] and verdict.cases[0].run_url.endswith(
        "/v1-quote_focus_pro_3h/"
    )
    assert isinstance(again, model("GateVerdict")) and again.url == verdict.url


def test_an_error_answer_is_the_shared_problem_object(api):
    client, _ = api

    problem = op("gate", "gate").sync(client=client, body=model("GateInRequest")(dataset="nope", experiment="v1"))

    assert isinstance(problem, model("Problem"))
    assert (problem.status, problem.title) == (404, "Not found")


def test_it_reads_a_runs_span_tree_as_typed_objects(api):
    client, _ = api
    tracer = Tracer(experiment="v1", dataset=None)
    with tracer.run("tree", input="book a room", latency_ms=12) as run:
        run.output = "booked"
        with run.span("agent", "plan") as plan, plan.span("tool", "quote_room", input={"room": "focus"}) as call:
            call.output = {"cents": 4200}
    created = op("traces", "traces_ingest").sync_detailed(
        client=client, body=model("TracesIngestBodyType1").from_dict({"traces": tracer.runs})
    )
    assert created.status_code == 201, created.content

    detail = op("traces", "traces_retrieve").sync(client=client, trace_id="tree")

    assert isinstance(detail, model("TraceDetailOut"))
    root, tool = detail.spans
    assert all(isinstance(span, model("Span")) for span in detail.spans)
    assert (root.name, root.depth, root.parent_id, root.kind.value) == ("plan", 0, None, "agent")
    assert (tool.name, tool.depth, tool.parent_id, tool.kind.value) == ("quote_room", 1, root.span_id, "tool")
    assert tool.output == {"cents": 4200}
    assert detail.tags == [] and detail.usage is None
