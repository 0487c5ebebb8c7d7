"""Query parameters an operation does not take are refused, naming them."""

import pytest

from tests.factories import run_payload


def test_a_misspelt_filter_is_a_400_naming_it_and_listing_what_the_list_takes(actors):
    actors.api().post("/v1/api/traces", run_payload("run-1", experiment="v2"), format="json")
    response = actors.api().get("/v1/api/traces?experment=v2")
    assert response.status_code == 400
    body = response.json()
    assert body["errors"] == [{"field": "experment", "message": "is not a query parameter of this operation"}]
    assert "experiment" in body["detail"] and "cursor" in body["detail"]
    assert actors.api().get("/v1/api/traces?experiment=v2").status_code == 200


@pytest.mark.parametrize(
    "path",
    ["/v1/api/gate-runs?H=1", "/v1/api/datasets?x=1", "/v1/api/experiments?dataset=a&nope=1"],
)
def test_every_list_refuses_an_unknown_parameter(actors, path):
    response = actors.api().get(path)
    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"


def test_a_path_parameter_holding_a_slash_still_matches_its_operation(actors):
    actors.api().post("/v1/api/datasets", {"name": "support/billing"}, format="json")
    assert actors.api().get("/v1/api/datasets/support/billing/cases?page_size=5").status_code == 200
    assert actors.api().get("/v1/api/datasets/support/billing/cases?pagesize=5").status_code == 400


def test_a_method_the_path_does_not_take_is_a_405_whatever_the_parameters(actors):
    assert actors.api().patch("/v1/api/cases/0/history?limit=20", {}, format="json").status_code == 405
