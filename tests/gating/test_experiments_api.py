from datasets.models import Dataset, Experiment
from tests.factories import run_payload


def test_it_registers_an_experiment_with_its_dataset_and_metadata(actors):
    Dataset.objects.create(project=actors.acme, name="reservo")
    body = {"name": "v2", "dataset": "reservo", "metadata": {"commit": "abc123", "branch": "main", "model": "m-1"}}
    response = actors.api().post("/v1/api/experiments", body, format="json")
    assert response.status_code == 201
    assert response.json()["dataset"] == "reservo" and response.json()["metadata"]["commit"] == "abc123"


def test_registering_again_merges_metadata_and_is_not_an_error(actors):
    api = actors.api()
    api.post("/v1/api/experiments", {"name": "v2", "metadata": {"commit": "abc"}}, format="json")
    response = api.post("/v1/api/experiments", {"name": "v2", "metadata": {"prompt_version": "7"}}, format="json")
    assert response.status_code == 200
    assert response.json()["metadata"] == {"commit": "abc", "prompt_version": "7"}


def test_an_experiment_created_by_ingestion_can_be_given_its_dataset_later_but_not_moved(actors):
    Dataset.objects.create(project=actors.acme, name="reservo")
    Dataset.objects.create(project=actors.acme, name="other")
    api = actors.api()
    api.post("/v1/api/traces", run_payload("r1", experiment="v9"), format="json")
    assert (
        api.post("/v1/api/experiments", {"name": "v9", "dataset": "reservo"}, format="json").json()["dataset"]
        == "reservo"
    )
    moved = api.post("/v1/api/experiments", {"name": "v9", "dataset": "other"}, format="json")
    assert moved.status_code == 409 and moved.json()["errors"][0]["field"] == "dataset"


def test_it_lists_and_reads_experiments_and_isolates_projects(actors):
    for name in ("v1", "v2"):
        Experiment.objects.create(project=actors.acme, name=name)
    names = [e["name"] for e in actors.api().get("/v1/api/experiments").json()["results"]]
    assert names == ["v2", "v1"]
    assert actors.api().get("/v1/api/experiments/v1").json()["name"] == "v1"
    assert actors.outsider_api().get("/v1/api/experiments/v1").status_code == 404
    assert actors.outsider_api().get("/v1/api/experiments").json()["results"] == []


def test_it_names_missing_and_unknown_fields(actors):
    response = actors.api().post("/v1/api/experiments", {"dataset": "nope"}, format="json")
    assert response.status_code == 400 and response.json()["errors"][0]["field"] == "name"
    assert actors.api().post("/v1/api/experiments", {"name": "v1", "dataset": "nope"}, format="json").status_code == 404


def test_a_name_over_the_limit_is_refused_even_when_its_surrounding_space_would_bring_it_under(actors):
    # The schema's maxLength holds for the text as sent (whitespace is trimmed after).
    response = actors.api().post("/v1/api/experiments", {"name": "\n" + "*" * 200}, format="json")
    assert response.status_code == 400, response.content
    assert response.json()["errors"][0]["field"] == "name"
    assert not Experiment.objects.exists()
    assert actors.api().post("/v1/api/experiments", {"name": " " + "*" * 199}, format="json").status_code == 201


def test_a_name_sent_as_a_number_is_refused_not_turned_into_text(actors):
    for name in (7, 1.5, True):
        response = actors.api().post("/v1/api/experiments", {"name": name}, format="json")
        assert response.status_code == 400, (name, response.content)
        assert response.json()["errors"][0]["field"] == "name"
    assert not Experiment.objects.exists()
