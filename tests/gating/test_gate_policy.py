import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from datasets.models import Dataset, Experiment
from gating.models import FloorChange, GatePolicy


@pytest.fixture
def dataset(actors):
    return Dataset.objects.create(project=actors.acme, name="reservo")


def _put(actors, body, key=None):
    return actors.api(key).put("/v1/api/datasets/reservo/gate-policy", body, format="json")


def test_the_default_policy_has_a_floor_of_one(actors, dataset):
    policy = actors.api().get("/v1/api/datasets/reservo/gate-policy").json()
    assert (policy["min_pass_rate"], policy["ratchet"], policy["fail_on_regression"], policy["max_abstained"]) == (
        1.0,
        True,
        True,
        0,
    )


def test_the_floor_can_be_raised_and_the_change_is_kept(actors, dataset):
    GatePolicy.objects.create(dataset=dataset, min_pass_rate=0.8)
    response = _put(
        actors,
        {
            "min_pass_rate": 0.9,
            "tolerance": 0.05,
            "scorers": ["no_errors"],
            "max_abstained": 1,
            "reason": "noisy vendor",
        },
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["min_pass_rate"], body["tolerance"], body["scorers"], body["max_abstained"]) == (
        0.9,
        0.05,
        ["no_errors"],
        1,
    )
    assert body["floor_history"][0]["old_floor"] == 0.8 and body["floor_history"][0]["source"] == "api"


def test_the_floor_cannot_be_lowered_through_the_api(actors, dataset):
    GatePolicy.objects.create(dataset=dataset, min_pass_rate=0.9)
    response = _put(actors, {"min_pass_rate": 0.5, "ratchet": False})
    assert response.status_code == 409
    assert "cannot be lowered" in response.json()["detail"]
    policy = GatePolicy.objects.get(dataset=dataset)
    assert (policy.min_pass_rate, policy.ratchet) == (0.9, True)


def test_it_names_bad_fields_unknown_scorers_and_baselines(actors, dataset):
    errors = _put(actors, {"min_pass_rate": 2, "tolerance": -1}).json()["errors"]
    assert {e["field"] for e in errors} == {"min_pass_rate", "tolerance"}
    assert "unknown scorer 'no_eror'" in _put(actors, {"scorers": ["no_eror"]}).json()["errors"][0]["message"]
    assert _put(actors, {"baseline": "ghost"}).status_code == 404
    Experiment.objects.create(project=actors.acme, name="v1")
    assert _put(actors, {"baseline": "v1"}).json()["baseline"] == "v1"


def test_another_projects_dataset_policy_is_404(actors, dataset):
    assert actors.outsider_api().get("/v1/api/datasets/reservo/gate-policy").status_code == 404
    assert _put(actors, {"min_pass_rate": 1.0}, key=actors.umbrella_key).status_code == 404


def _admin_client(user):
    user.is_staff = True
    user.save()
    client = Client()
    client.force_login(user)
    return client


def _change(client, policy, **fields):
    data = {
        "min_pass_rate": policy.min_pass_rate, "reason": "", "ratchet": "on", "fail_on_regression": "on",
        "tolerance": 0, "scorers": "[]", "max_abstained": 0, "baseline": "",
        "floor_changes-TOTAL_FORMS": 0, "floor_changes-INITIAL_FORMS": 0,
    }  # fmt: skip
    data.update(fields)
    return client.post(f"/admin/experiments/gatepolicy/{policy.pk}/change/", data)


def test_a_project_admin_lowers_the_floor_in_the_admin_with_a_written_reason(actors, dataset):
    from django.contrib.auth.models import Permission

    policy = GatePolicy.objects.create(dataset=dataset, min_pass_rate=1.0)
    alice = actors.alice
    alice.user_permissions.add(*Permission.objects.filter(codename__in=["change_gatepolicy", "view_gatepolicy"]))
    client = _admin_client(get_user_model().objects.get(pk=alice.pk))
    refused = _change(client, policy, min_pass_rate=0.8)
    assert refused.status_code == 200 and "Say why the floor changes" in refused.content.decode()
    assert GatePolicy.objects.get(pk=policy.pk).min_pass_rate == 1.0
    done = _change(client, policy, min_pass_rate=0.8, reason="The tax rules changed; two cases are being rewritten.")
    assert done.status_code == 302
    assert GatePolicy.objects.get(pk=policy.pk).min_pass_rate == 0.8
    change = FloorChange.objects.get(policy=policy)
    assert (change.old_floor, change.new_floor, change.source, change.changed_by_id) == (1.0, 0.8, "admin", alice.pk)
    assert change.reason.startswith("The tax rules changed")


def test_a_staff_user_who_is_not_the_projects_admin_cannot_see_its_policy(actors, dataset):
    from django.contrib.auth.models import Permission

    policy = GatePolicy.objects.create(dataset=dataset)
    bob = actors.bob  # a reviewer of acme, not an admin
    bob.user_permissions.add(*Permission.objects.filter(codename__in=["change_gatepolicy", "view_gatepolicy"]))
    client = _admin_client(get_user_model().objects.get(pk=bob.pk))
    assert (
        client.get(f"/admin/experiments/gatepolicy/{policy.pk}/change/").status_code == 302
    )  # "not found", back to the list
    assert GatePolicy.objects.get(pk=policy.pk).min_pass_rate == 1.0
