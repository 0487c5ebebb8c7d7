"""Key scopes: what a CI key (``ingest,gate``) can do, and the 403 that names the scope it lacks."""

import pytest
from django.core.management import call_command

from evalsite.models import ApiKey
from evalsite.scopes import ADMIN, view_scope
from tests.factories import run_payload


def _assert_scope_missing(response, scope):
    assert response.status_code == 403, response.content
    body = response.json()
    assert response["Content-Type"] == "application/problem+json"
    assert body["type"].endswith("/problems/scope-missing")
    assert body["required_scope"] == scope
    assert repr(scope) in body["detail"]


def test_a_ci_key_sends_runs_creates_experiments_and_reads(actors):
    ci = actors.ci_api()
    assert ci.post("/v1/api/traces", {"traces": [run_payload("t-1")]}, format="json").status_code in (200, 201)
    assert ci.post("/v1/api/experiments", {"name": "v1"}, format="json").status_code in (200, 201)
    assert ci.get("/v1/api/traces").status_code == 200
    assert ci.get("/v1/api/datasets").status_code == 200


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("post", "/v1/api/datasets", {"name": "new"}),
        ("put", "/v1/api/datasets/golden/gate-policy", {"trial_pass_ratio": 0.2}),
        ("post", "/v1/api/datasets/golden/cases", {"name": "c", "input": "hi"}),
        ("post", "/v1/api/datasets/golden/import", {}),
        ("post", "/v1/api/datasets/golden/cases/from-traces", {"trace_ids": ["t-1"]}),
        ("post", "/v1/api/label-configs", {"name": "tone", "kind": "boolean"}),
        ("put", "/v1/api/prices/gpt-x", {"input_per_million": 1, "output_per_million": 2}),
    ],
)
def test_a_ci_key_cannot_curate(actors, method, path, body):
    actors.api().post("/v1/api/datasets", {"name": "golden"}, format="json")
    response = getattr(actors.ci_api(), method)(path, body, format="json")
    _assert_scope_missing(response, "curate")


def test_a_ci_key_cannot_edit_or_archive_a_case(actors):
    actors.api().post("/v1/api/datasets", {"name": "golden"}, format="json")
    case = actors.api().post("/v1/api/datasets/golden/cases", {"name": "c", "input": "hi"}, format="json").json()
    ci = actors.ci_api()
    _assert_scope_missing(ci.patch(f"/v1/api/cases/{case['id']}", {"expectations": {}}, format="json"), "curate")
    _assert_scope_missing(ci.delete(f"/v1/api/cases/{case['id']}"), "curate")


def test_only_a_label_key_writes_ground_truth_labels(actors):
    actors.api().post("/v1/api/traces", {"traces": [run_payload("t-1")]}, format="json")
    actors.api().post("/v1/api/label-configs", {"name": "ok", "kind": "boolean"}, format="json")
    body = {"config": "ok", "value": True}
    for scopes in (("ingest", "gate"), ("curate",)):
        _assert_scope_missing(actors.ci_api(scopes).post("/v1/api/traces/t-1/labels", body, format="json"), "label")
    assert actors.ci_api(("label",)).post("/v1/api/traces/t-1/labels", body, format="json").status_code == 201


def test_a_curate_key_cannot_send_runs(actors):
    response = actors.ci_api(("curate",)).post("/v1/api/traces", {"traces": [run_payload("t-1")]}, format="json")
    _assert_scope_missing(response, "ingest")


def test_a_key_made_before_scopes_keeps_full_access(actors):
    ci = actors.ci_api()
    ApiKey.objects.filter(name="ci ingest,gate").update(full_access=True)
    assert ci.post("/v1/api/datasets", {"name": "golden"}, format="json").status_code == 201


def test_a_write_a_view_does_not_declare_needs_admin():
    class Undeclared:
        required_scopes = {"POST": "ingest"}

    assert view_scope(Undeclared, "POST") == "ingest"
    assert view_scope(Undeclared, "DELETE") == ADMIN
    assert view_scope(Undeclared, "GET") is None


def test_create_api_key_defaults_to_what_a_ci_job_needs(actors, capsys):
    call_command("create_api_key", "acme", "--name", "ci-main")
    assert "with scopes ingest,gate" in capsys.readouterr().out
    call_command("create_api_key", "acme", "--name", "curator", "--scopes", "label, curate")
    assert ApiKey.objects.get(name="ci-main").scopes == ["ingest", "gate"]
    assert ApiKey.objects.get(name="curator").scopes == ["curate", "label"]


def test_create_api_key_names_an_unknown_scope(actors):
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="--scopes: unknown scope 'deploy'"):
        call_command("create_api_key", "acme", "--scopes", "ingest,deploy")


def test_create_project_prints_an_admin_key(db, capsys):
    call_command("create_project", "pharmacy")
    assert ApiKey.objects.get(project__slug="pharmacy").scopes == ["admin"]


def test_the_openapi_description_names_each_operations_scope(actors):
    schema = actors.api().get("/v1/api/schema/", HTTP_ACCEPT="application/json").json()
    paths = schema["paths"]
    assert paths["/v1/api/traces"]["post"]["x-required-scope"] == "ingest"
    assert paths["/v1/api/gate"]["post"]["x-required-scope"] == "gate"
    assert paths["/v1/api/datasets/{name}/gate-policy"]["put"]["x-required-scope"] == "curate"
    assert paths["/v1/api/traces/{trace_id}/labels"]["post"]["x-required-scope"] == "label"
    assert paths["/v1/api/traces"]["get"]["x-required-scope"] == "any"
    assert "403" in paths["/v1/api/datasets/{name}/gate-policy"]["put"]["responses"]


@pytest.mark.parametrize(
    "path",
    ["/v1/api/traces", "/v1/api/traces/t-1", "/v1/api/datasets", "/v1/api/gate-runs", "/v1/api/label-configs"],
)
def test_a_feedback_key_cannot_read_the_project(actors, path):
    actors.api().post("/v1/api/traces", {"traces": [run_payload("t-1")]}, format="json")
    response = actors.ci_api(("feedback",)).get(path)
    _assert_scope_missing(response, "any")
    assert "only send feedback" in response.json()["detail"]


def test_a_feedback_key_cannot_send_runs_or_gate(actors):
    feedback = actors.ci_api(("feedback",))
    _assert_scope_missing(feedback.post("/v1/api/traces", {"traces": [run_payload("t-1")]}, format="json"), "ingest")
    _assert_scope_missing(feedback.post("/v1/api/gate", {"experiment": "v1"}, format="json"), "gate")


def test_a_key_with_feedback_and_another_scope_reads(actors):
    assert actors.ci_api(("feedback", "ingest")).get("/v1/api/traces").status_code == 200


def test_the_openapi_description_documents_the_403_of_reads(actors):
    schema = actors.api().get("/v1/api/schema/", HTTP_ACCEPT="application/json").json()
    assert "403" in schema["paths"]["/v1/api/traces"]["get"]["responses"]
