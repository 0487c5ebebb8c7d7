"""The served OpenAPI schema describes what the API answers, in a shape generators can use.

Lists are the pages they return, errors share one component, the gate's answers are
typed, and real answers validate against the components the schema names for them.
"""

import json

import pytest
from jsonschema import Draft202012Validator

from datasets.models import Dataset
from evalgate import Tracer
from examples.reservo import GOLDEN_CASES_PATH, load_golden_cases, load_script
from examples.reservo.tracing import case_trace

LISTS = {
    "/v1/api/traces": "PaginatedTraceList",
    "/v1/api/datasets": "PaginatedDatasetList",
    "/v1/api/datasets/{name}/cases": "PaginatedCaseList",
    "/v1/api/experiments": "PaginatedExperimentList",
    "/v1/api/gate-runs": "PaginatedGateRunSummaryList",
}


@pytest.fixture(scope="module")
def schema():
    from django.test import Client

    response = Client().get("/v1/api/schema/", {"format": "json"})
    assert response.status_code == 200
    return json.loads(response.content)


def json_schema(schema, path, method, status):
    return schema["paths"][path][method]["responses"][status]["content"]["application/json"]["schema"]


def validator(schema, component):
    """A validator for ``component`` that resolves ``#/components/...`` against the whole document."""
    return Draft202012Validator({**schema, "$ref": f"#/components/schemas/{component}"})


def errors_of(schema, component, body):
    return [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator(schema, component).iter_errors(body)
    ]


@pytest.mark.parametrize("path", sorted(LISTS))
def test_every_list_is_declared_as_the_page_it_returns(schema, path):
    operation = schema["paths"][path]["get"]

    assert json_schema(schema, path, "get", "200") == {"$ref": f"#/components/schemas/{LISTS[path]}"}
    page = schema["components"]["schemas"][LISTS[path]]
    assert sorted(page["required"]) == ["next", "previous", "results"]
    assert page["properties"]["results"]["type"] == "array"
    assert {"cursor", "page_size"} <= {p["name"] for p in operation["parameters"]}


def test_no_answer_is_declared_as_a_bare_array(schema):
    bare = [
        f"{method.upper()} {path} {status}"
        for path, operations in schema["paths"].items()
        for method, operation in operations.items()
        for status, response in operation.get("responses", {}).items()
        for media in response.get("content", {}).values()
        if media.get("schema", {}).get("type") == "array"
    ]
    assert bare == []


def test_every_problem_answer_refers_to_one_component(schema):
    problems = [
        media["schema"]
        for operations in schema["paths"].values()
        for operation in operations.values()
        for response in operation.get("responses", {}).values()
        for kind, media in response.get("content", {}).items()
        if kind == "application/problem+json"
    ]

    assert len(problems) > 50
    assert all(s == {"$ref": "#/components/schemas/Problem"} for s in problems)
    assert json.dumps(schema).count('"RFC 9457') == 1  # one description, not a copy per answer
    assert schema["components"]["schemas"]["Problem"]["required"] == ["detail", "status", "title", "type"]


def test_the_jsonl_import_and_the_otlp_endpoint_are_documented(schema):
    imports = schema["paths"]["/v1/api/datasets/{name}/import"]["post"]
    otlp = schema["paths"]["/v1/traces"]["post"]

    assert {"application/jsonl", "application/octet-stream"} <= set(imports["requestBody"]["content"])
    assert json_schema(schema, "/v1/api/datasets/{name}/import", "post", "200") == {
        "$ref": "#/components/schemas/ImportResult"
    }
    assert {"application/json", "application/x-protobuf"} <= set(otlp["requestBody"]["content"])
    logs = schema["paths"]["/v1/logs"]["post"]
    assert {"application/json", "application/x-protobuf"} <= set(logs["requestBody"]["content"])
    assert "rejectedLogRecords" in json.dumps(logs["responses"]["200"])


def test_the_gate_answers_are_typed(schema):
    assert json_schema(schema, "/v1/api/gate", "post", "200") == {"$ref": "#/components/schemas/GateVerdict"}
    assert json_schema(schema, "/v1/api/gate-runs/{gate_run_id}", "get", "200") == {
        "$ref": "#/components/schemas/GateRun"
    }
    assert json_schema(schema, "/v1/api/datasets/{name}/gate-policy", "get", "200") == {
        "$ref": "#/components/schemas/GatePolicyOut"
    }
    case = schema["components"]["schemas"]["GateCase"]
    assert {"name", "passed", "actual_tools", "tool_choice_ok", "schema_errors", "output_errors", "cost_cents",
            "cost_ok", "latency_ms", "latency_ok", "run_url", "failed_checks", "reasons"} <= set(case["required"])  # fmt: skip


@pytest.fixture
def reservo(actors):
    """Reservo's golden set in acme, with v1 (clean) and v2 (the seed's regression) uploaded."""
    api = actors.api()
    assert api.post("/v1/api/datasets", {"name": "reservo"}, format="json").status_code == 201
    body = GOLDEN_CASES_PATH.read_bytes()
    assert api.generic("POST", "/v1/api/datasets/reservo/import", body, "application/jsonl").status_code == 201
    for experiment, overrides in (("v1", {}), ("v2", {"quote_focus_pro_3h": load_script("quote_books_instead")})):
        tracer = Tracer(experiment=experiment, dataset="reservo")
        for case in load_golden_cases():
            case_trace(tracer, case, script=overrides.get(case["name"]), trace_id=f"{experiment}-{case['name']}")
        assert api.post("/v1/api/traces", {"traces": tracer.runs}, format="json").status_code == 201
    return api


def test_a_real_verdict_a_gate_run_and_a_policy_match_their_components(schema, reservo):
    verdict = reservo.post("/v1/api/gate", {"dataset": "reservo", "experiment": "v2"}, format="json").json()
    gate_run = reservo.get(f"/v1/api/gate-runs/{verdict['gate_run_id']}").json()
    policy = reservo.get("/v1/api/datasets/reservo/gate-policy").json()

    assert verdict["verdict"] == "FAIL"
    assert errors_of(schema, "GateVerdict", verdict) == []
    assert errors_of(schema, "GateRun", gate_run) == []
    assert errors_of(schema, "GatePolicyOut", policy) == []


def test_a_running_gate_run_matches_the_pending_shape_only(schema, reservo, settings):
    settings.EVALSITE_GATE_SYNC_MAX_CASES = 0
    accepted = reservo.post("/v1/api/gate", {"dataset": "reservo", "experiment": "v1"}, format="json").json()
    pending = reservo.get(f"/v1/api/gate-runs/{accepted['gate_run_id']}").json()

    assert errors_of(schema, "GateAccepted", accepted) == []
    assert errors_of(schema, "GateRun", pending) == []
    assert errors_of(schema, "GateVerdict", pending) != []  # the two shapes of GateRun exclude each other


def test_the_components_refuse_a_verdict_with_a_wrong_field(schema, reservo):
    verdict = reservo.post("/v1/api/gate", {"dataset": "reservo", "experiment": "v1"}, format="json").json()
    verdict["cases"][0]["passed"] = "yes"
    del verdict["pass_rate"]

    assert sorted(errors_of(schema, "GateVerdict", verdict)) == [
        ": 'pass_rate' is a required property",
        "cases/0/passed: 'yes' is not of type 'boolean'",
    ]


def test_an_invalid_cursor_is_a_400_naming_the_parameter(actors):
    response = actors.api().get("/v1/api/traces", {"cursor": "not-a-cursor"})

    assert response.status_code == 400
    assert response.json()["errors"] == [
        {"field": "cursor", "message": "is not a cursor of this list: take it from next or previous"}
    ]


def test_lists_of_datasets_page_through_with_the_documented_parameters(actors):
    for name in ("a", "b", "c"):
        Dataset.objects.create(project=actors.acme, name=name)

    first = actors.api().get("/v1/api/datasets", {"page_size": 2}).json()
    second = actors.api().get(first["next"]).json()

    assert [d["name"] for d in first["results"]] + [d["name"] for d in second["results"]] == ["a", "b", "c"]
    assert second["next"] is None


def test_every_operation_documents_the_errors_any_request_may_get(schema):
    # The middleware answers these before any view: a NUL in the path or the query (400),
    # a body over the limit, chunked or not (413); an operation behind a key answers 401.
    missing = []
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            needed = {"400", "413"} | ({"401"} if operation.get("security") != [{}] else set())
            missing += [f"{method.upper()} {path} {status}" for status in needed - set(operation["responses"])]
    assert missing == []


def test_the_otlp_export_body_is_required(schema):
    assert schema["paths"]["/v1/traces"]["post"]["requestBody"]["required"] is True


def test_a_scoring_request_names_a_scorer_by_id_or_with_a_config_of_its_own(schema):
    scorers = schema["components"]["schemas"]["ScoreRequestInRequest"]["properties"]["scorers"]
    check = Draft202012Validator(scorers)

    assert check.is_valid(
        ["answered", "json_valid", {"scorer": "json_valid", "config": {"schema": {"type": "object"}}}]
    )
    assert check.is_valid([{"scorer": "answered"}])
    assert not check.is_valid([{"scorer": "json_valid", "configs": {}}])
    assert not check.is_valid([{"config": {}}])
    assert not check.is_valid([7])
    passes = schema["components"]["schemas"]["PassOut"]["properties"]["scorers"]
    assert passes["items"] == scorers["items"]


def test_the_policys_input_match_and_the_verdicts_input_mismatches_are_documented(schema):
    components = schema["components"]["schemas"]
    policy_in = components["GatePolicyIORequest"]["properties"]["input_match"]
    assert "warn" in json.dumps(policy_in) and "require" in json.dumps(policy_in)
    assert "input_match" in components["GatePolicyOut"]["required"]
    mismatches = components["GateVerdict"]["properties"]["input_mismatches"]
    assert mismatches["items"] == {"$ref": "#/components/schemas/GateInputMismatch"}
    assert components["GateInputMismatch"]["required"] == ["case", "trace_id"]


def _any_or_null_unions(node, path=""):
    """Where a schema says ``oneOf: [{}, {"type": "null"}]``: a null matches both, so none validates."""
    found = []
    if isinstance(node, dict):
        for key in ("oneOf", "anyOf"):
            if isinstance(node.get(key), list) and {} in node[key]:
                found.append(path)
        for key, value in node.items():
            found += _any_or_null_unions(value, f"{path}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += _any_or_null_unions(value, f"{path}[{index}]")
    return found


def test_no_nullable_field_is_declared_as_a_union_a_null_cannot_match(schema):
    assert _any_or_null_unions(schema) == []


def test_a_run_and_a_case_with_null_values_match_their_components(schema, actors):
    api = actors.api()
    assert api.post("/v1/api/traces", {"trace_id": "bare"}, format="json").status_code == 201
    run = api.get("/v1/api/traces/bare").json()
    assert run["input"] is None and run["usage"] is None and run["cost_detail"] is None
    assert errors_of(schema, "TraceDetailOut", run) == []
    assert errors_of(schema, "TraceDetailOut", {**run, "usage": "many"}) == [
        "usage: 'many' is not valid under any of the given schemas"
    ]
    assert api.post("/v1/api/datasets", {"name": "d"}, format="json").status_code == 201
    case = api.post("/v1/api/datasets/d/cases", {"name": "c", "input": "q"}, format="json").json()
    assert case["expected_output"] is None
    assert errors_of(schema, "CaseOut", case) == []
