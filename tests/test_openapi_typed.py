"""The served schema types what users read: no object is left a bare dict unless it is free-form.

Every property, item and map value of every component, answer and request body is
walked; an object schema without ``properties`` (or a value of any type) is listed,
unless the allow-list below names it with the reason it is free-form. A new untyped dict
fails here. Real answers then validate against the typed components: a run's span
tree, a verdict's flipped cases, a comparison, a case's history, a price lookup.
"""

import json
from fnmatch import fnmatchcase

import pytest
from jsonschema import Draft202012Validator

from tests.test_openapi_schema import errors_of, reservo  # noqa: F401 (a fixture)

_VALUE = "a run's or a case's input and answer: text or any JSON value the agent takes or gives"
_SCHEMA = "a JSON Schema document, the user's own"
_CONFIG = "a scorer's config: each scorer takes its own, described by GET /v1/api/scorers (config_schema)"
_EVIDENCE = "a scorer's evidence: its keys depend on the scorer (docs/scorers.md)"
_CHANGE = "the old or new value of whichever field changed: any JSON value"
_OTLP = "google.rpc.Status details of OTLP/HTTP: protobuf Any messages"

FREE_FORM = {
    "*.input": _VALUE,
    "*.output": _VALUE,
    "*.expected_output": _VALUE,
    "*.metadata": "the user's own key/values of a run, case or experiment (a rule's filter: each key equal)",
    "*.attributes": "a span's attributes as the client sent them",
    "Span.usage": "a span's token counts as the client sent them (POST traces takes any object)",
    "POST /v1/api/traces body *.spans[].usage": "a span's token counts: any object is taken",
    "*.expectations.expected_tool_calls[].args": "the arguments a tool call must carry: the user's tool's own shape",
    "*.expectations.tool_output": "field values the target tool's result must carry: the user's tool's own shape",
    "*.expectations.tool_output_schema": _SCHEMA,
    "*.expectations.output_schema": _SCHEMA,
    "Scorer.config_schema": _SCHEMA,
    "GET /v1/api/schemas/expectations 200 application/json": _SCHEMA,
    "*.scorers[]|1.config": _CONFIG,
    "*InRequest.config{}": _CONFIG,
    "PassOut.config": _CONFIG,
    "PassDetailOut.config": _CONFIG,
    "RuleOut.config": _CONFIG,
    "RunScoreOut.config": _CONFIG,
    "ScoreOut.detail": _EVIDENCE,
    "SkipOut.detail": _EVIDENCE,
    "RunScoreOut.detail": _EVIDENCE,
    "RunAbstentionOut.detail": _EVIDENCE,
    "GateCheck.detail": _EVIDENCE,
    "PolicyFieldChange.old": _CHANGE,
    "PolicyFieldChange.new": _CHANGE,
    "RevisionOut.old": _CHANGE,
    "RevisionOut.new": _CHANGE,
    "POST /v1/traces * application/json.details[]": _OTLP,
    "POST /v1/logs * application/json.details[]": _OTLP,
}
_COMBINERS = ("oneOf", "anyOf", "allOf")


def _untyped(node):
    """An object without properties (a bare dict), or a value of any type."""
    if "$ref" in node or "enum" in node or "const" in node or any(k in node for k in _COMBINERS):
        return False
    kind = node.get("type")
    kinds = kind if isinstance(kind, list) else [kind] if kind else []
    if kinds and "object" not in kinds:
        return False
    values = node.get("additionalProperties")
    return "properties" not in node and values is not False and not (isinstance(values, dict) and values)


def _walk(node, path, found):
    if not isinstance(node, dict):
        return
    if _untyped(node):
        found.append(path)
        return
    for name, value in node.get("properties", {}).items():
        _walk(value, f"{path}.{name}", found)
    if isinstance(node.get("items"), dict):
        _walk(node["items"], f"{path}[]", found)
    if isinstance(node.get("additionalProperties"), dict):
        _walk(node["additionalProperties"], path + "{}", found)
    for key in _COMBINERS:
        for number, value in enumerate(node.get(key, [])):
            _walk(value, f"{path}|{number}", found)


def untyped_objects(schema):
    """Paths of every untyped object: ``Component.field[]...``, or ``METHOD path status|body type...``."""
    found = []
    for name, component in schema["components"]["schemas"].items():
        _walk(component, name, found)
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            for status, answer in operation.get("responses", {}).items():
                for kind, media in answer.get("content", {}).items():
                    _walk(media.get("schema", {}), f"{method.upper()} {path} {status} {kind}", found)
            for kind, media in operation.get("requestBody", {}).get("content", {}).items():
                _walk(media.get("schema", {}), f"{method.upper()} {path} body {kind}", found)
    return found


def not_allowed(paths):
    return [p for p in paths if not any(fnmatchcase(p, pattern) for pattern in FREE_FORM)]


@pytest.fixture(scope="module")
def schema():
    from django.test import Client

    response = Client().get("/v1/api/schema/", {"format": "json"})
    assert response.status_code == 200
    return json.loads(response.content)


def test_no_answer_or_request_leaves_an_object_untyped_unless_it_is_free_form(schema):
    found = untyped_objects(schema)

    assert not_allowed(found) == []
    unused = [pattern for pattern in FREE_FORM if not any(fnmatchcase(p, pattern) for p in found)]
    assert unused == []  # an entry nothing needs any more goes


def test_the_check_finds_a_new_untyped_dict(schema):
    grown = json.loads(json.dumps(schema))
    grown["components"]["schemas"]["Span"]["properties"]["tool_calls"] = {"type": "object", "additionalProperties": {}}
    grown["components"]["schemas"]["GateVerdict"]["properties"]["notes"] = {"type": "array", "items": {}}

    assert not_allowed(untyped_objects(grown)) == ["GateVerdict.notes[]", "Span.tool_calls"]


def test_what_users_read_most_refers_to_typed_components(schema):
    components = schema["components"]["schemas"]
    detail = components["TraceDetailOut"]["properties"]

    assert detail["spans"]["items"] == {"$ref": "#/components/schemas/Span"}
    span = components["Span"]
    assert {"span_id", "parent_id", "depth", "input", "output"} <= set(span["required"])
    assert span["properties"]["kind"] == {"$ref": "#/components/schemas/SpanKindEnum"}
    assert detail["usage"]["oneOf"][0] == {"$ref": "#/components/schemas/TokenUsage"}
    assert components["GateVerdict"]["properties"]["flipped"]["oneOf"][0] == {"$ref": "#/components/schemas/Flipped"}
    assert components["PassOut"]["properties"]["selection"]["allOf"] == [{"$ref": "#/components/schemas/PassSelection"}]


def test_a_run_a_verdict_and_a_comparison_match_their_typed_components(schema, reservo):  # noqa: F811
    first = reservo.post(
        "/v1/api/gate", {"dataset": "reservo", "experiment": "v1", "set_baseline": True}, format="json"
    )
    verdict = reservo.post("/v1/api/gate", {"dataset": "reservo", "experiment": "v2"}, format="json").json()
    run = reservo.get("/v1/api/traces/v2-quote_focus_pro_3h").json()
    compare = reservo.get("/v1/api/experiments/compare", {"base": "v1", "candidate": "v2"}).json()

    assert first.status_code == 200 and verdict["verdict"] == "FAIL"
    assert verdict["flipped"]["pass_to_fail_count"] >= 1
    assert errors_of(schema, "GateVerdict", verdict) == []
    assert [s["kind"] for s in run["spans"]].count("tool") >= 1
    assert errors_of(schema, "TraceDetailOut", run) == []
    assert errors_of(schema, "Comparison", compare) == []
    broken = {**run, "spans": [{**run["spans"][0], "depth": "top"}]}
    assert errors_of(schema, "TraceDetailOut", broken) == ["spans/0/depth: 'top' is not of type 'integer'"]


def test_a_case_history_a_price_lookup_and_a_pass_match_their_components(schema, reservo):  # noqa: F811
    reservo.post("/v1/api/gate", {"dataset": "reservo", "experiment": "v1"}, format="json")
    case_id = reservo.get("/v1/api/datasets/reservo/cases").json()["results"][0]["id"]
    history = reservo.get(f"/v1/api/cases/{case_id}/history")
    prices = reservo.get("/v1/api/prices", {"model": "gpt-4o"})
    unknown = reservo.get("/v1/api/prices", {"model": "no-such-model"})
    scored = reservo.post("/v1/api/passes", {"scorers": ["answered"], "dry_run": True}, format="json")

    assert history.status_code == 200 and history.json()["experiments"][0]["experiment"] == "v1"
    assert validate(schema, "/v1/api/cases/{case_id}/history", history.json()) == []
    assert prices.json()["lookup"]["known"] is True and unknown.json()["lookup"]["known"] is False
    assert errors_of(schema, "PricesOut", prices.json()) == [] and errors_of(schema, "PricesOut", unknown.json()) == []
    assert scored.status_code in (200, 201, 202), scored.content
    assert errors_of(schema, "PassOut", scored.json()) == []


def validate(schema, path, body):
    answer = schema["paths"][path]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
    return [e.message for e in Draft202012Validator({**schema, **answer}).iter_errors(body)]
