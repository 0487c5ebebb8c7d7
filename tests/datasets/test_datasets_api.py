"""Datasets through the API: create, list, read; the published expectations schema."""

from django.db import connection
from django.test.utils import CaptureQueriesContext

from checks.expectations import EXPECTATIONS_SCHEMA
from datasets.models import Dataset


def _problem_fields(response):
    assert response["Content-Type"] == "application/problem+json"
    return {e["field"] for e in response.json()["errors"]}


def test_it_creates_a_dataset_and_reads_it_back(actors):
    api = actors.api()
    response = api.post("/v1/api/datasets", {"name": "reservo", "description": "Booking agent"}, format="json")
    assert response.status_code == 201, response.content
    assert response.json() == {
        "name": "reservo",
        "description": "Booking agent",
        "archived": False,
        "created_at": response.json()["created_at"],
        "cases": {"active": 0, "draft": 0, "archived": 0, "needs_expected_output": 0},
    }
    assert api.get("/v1/api/datasets/reservo").json()["name"] == "reservo"


def test_it_refuses_a_taken_dataset_name_with_409(actors):
    api = actors.api()
    api.post("/v1/api/datasets", {"name": "reservo"}, format="json")
    response = api.post("/v1/api/datasets", {"name": "reservo"}, format="json")
    assert response.status_code == 409
    assert _problem_fields(response) == {"name"}
    assert Dataset.objects.filter(project=actors.acme).count() == 1


def test_two_projects_may_use_the_same_dataset_name(actors):
    assert actors.api().post("/v1/api/datasets", {"name": "shared"}, format="json").status_code == 201
    assert actors.outsider_api().post("/v1/api/datasets", {"name": "shared"}, format="json").status_code == 201


def test_it_names_each_bad_dataset_field(actors):
    response = actors.api().post("/v1/api/datasets", {"name": "ends/cases", "descripton": "typo"}, format="json")
    assert response.status_code == 400
    errors = {e["field"]: e["message"] for e in response.json()["errors"]}
    assert set(errors) == {"name", "descripton"}
    assert "did you mean 'description'" in errors["descripton"]
    assert not Dataset.objects.exists()


def test_it_refuses_a_body_that_is_not_an_object(actors):
    response = actors.api().post("/v1/api/datasets", ["reservo"], format="json")
    assert response.status_code == 400


def test_it_lists_datasets_by_name_with_case_counts(actors):
    api = actors.api()
    for name in ("zeta", "alpha", "mid"):
        api.post("/v1/api/datasets", {"name": name}, format="json")
    api.post("/v1/api/datasets/alpha/cases", {"name": "a", "expected_output": "yes"}, format="json")
    api.post("/v1/api/datasets/alpha/cases", {"name": "b"}, format="json")
    api.post("/v1/api/datasets/alpha/cases", {"name": "c", "status": "draft"}, format="json")
    body = api.get("/v1/api/datasets?page_size=2").json()
    assert [d["name"] for d in body["results"]] == ["alpha", "mid"]
    assert body["results"][0]["cases"] == {"active": 2, "draft": 1, "archived": 0, "needs_expected_output": 2}
    assert [d["name"] for d in api.get(body["next"]).json()["results"]] == ["zeta"]


def test_the_dataset_list_costs_a_fixed_number_of_queries(actors):
    api = actors.api()
    api.post("/v1/api/datasets", {"name": "d0"}, format="json")
    api.get("/v1/api/datasets")
    with CaptureQueriesContext(connection) as few:
        api.get("/v1/api/datasets")
    for i in range(1, 12):
        api.post("/v1/api/datasets", {"name": f"d{i}"}, format="json")
        api.post(f"/v1/api/datasets/d{i}/cases", {"name": "c"}, format="json")
    with CaptureQueriesContext(connection) as many:
        assert len(api.get("/v1/api/datasets").json()["results"]) == 12
    assert len(many) == len(few)


def test_an_outsider_gets_404_for_a_dataset_and_sees_none_in_lists(actors):
    actors.api().post("/v1/api/datasets", {"name": "private"}, format="json")
    outsider = actors.outsider_api()
    response = outsider.get("/v1/api/datasets/private")
    assert response.status_code == 404
    assert response["Content-Type"] == "application/problem+json"
    assert outsider.get("/v1/api/datasets").json()["results"] == []


def test_an_unknown_dataset_is_404(actors):
    assert actors.api().get("/v1/api/datasets/nope").status_code == 404


def test_datasets_need_a_key(actors):
    assert actors.api(key="").get("/v1/api/datasets").status_code == 401


def test_it_publishes_the_expectations_schema_without_a_key(actors):
    response = actors.api(key="").get("/v1/api/schemas/expectations")
    assert response.status_code == 200
    assert response.json() == EXPECTATIONS_SCHEMA
    assert response.json()["additionalProperties"] is False


def test_the_openapi_schema_documents_the_curation_endpoints(actors):
    paths = actors.api().get("/v1/api/schema/?format=json").json()["paths"]
    for path in (
        "/v1/api/datasets",
        "/v1/api/datasets/{name}",
        "/v1/api/datasets/{name}/cases",
        "/v1/api/datasets/{name}/cases/from-traces",
        "/v1/api/datasets/{name}/export",
        "/v1/api/datasets/{name}/import",
        "/v1/api/cases/{case_id}",
        "/v1/api/schemas/expectations",
    ):
        assert path in paths, path
