"""The gate policy on the dataset page: read by members, changed by admins as revisions with a reason."""

import pytest
from django.test import Client

from datasets.models import Dataset
from gating.models import GatePolicy, PolicyRevision

PAGE = "/p/acme/datasets/refills/"


@pytest.fixture
def dataset(actors):
    dataset = Dataset.objects.create(project=actors.acme, name="refills")
    GatePolicy.objects.create(dataset=dataset, min_pass_rate=0.9, trials=3, max_flaky=0)
    return dataset


def _client(user):
    client = Client()
    client.force_login(user)
    return client


def _form(**overrides):
    values = {
        "min_pass_rate": 0.9, "trials": 3, "trial_pass_ratio": 1.0, "max_flaky": 0, "max_abstained": 0,
        "tolerance": 0, "ratchet": "on", "fail_on_regression": "on", "judge_min_kappa": "", "judge_min_labels": 30,
        "scorers": "", "input_match": "warn", "reason": "",
    }  # fmt: skip
    values.update(overrides)
    return {f"policy-{k}": v for k, v in values.items() if v is not None}


def test_members_read_the_policy_and_only_admins_get_the_form(actors, dataset):
    page = _client(actors.victor).get(PAGE).content.decode()
    assert 'id="policy"' in page and "3 per case" in page and "0.900" in page
    assert 'id="policy-form"' not in page
    assert 'id="policy-form"' in _client(actors.alice).get(PAGE).content.decode()
    assert _client(actors.bob).post(PAGE + "policy/", _form(trials=5)).status_code == 403


def test_an_admin_loosens_with_a_reason_and_the_history_shows_it(actors, dataset):
    alice = _client(actors.alice)
    response = alice.post(PAGE + "policy/", _form(max_flaky=""))
    assert response.status_code == 400
    html = response.content.decode()
    assert "This change loosens the gate of refills (Flaky cases allowed (empty: no limit)" in html
    assert "write why in the &#x27;Why (required to loosen the gate or lower the floor)&#x27; box" in html
    assert "`reason`" not in html and 'id="id_policy-reason-error"' in html
    assert not PolicyRevision.objects.exists()
    response = alice.post(PAGE + "policy/", _form(max_flaky="", reason="a flaky pharmacy API this week"))
    assert response.status_code == 302
    revision = PolicyRevision.objects.get()
    assert (revision.author, revision.source, revision.loosens) == ("alice", "page", True)
    page = alice.get(PAGE).content.decode()
    assert "max_flaky 0 → none" in page and "a flaky pharmacy API this week" in page


def test_an_admin_lowers_the_floor_in_the_page_with_a_reason(actors, dataset):
    alice = _client(actors.alice)
    assert alice.post(PAGE + "policy/", _form(min_pass_rate=0.5)).status_code == 400
    assert GatePolicy.objects.get().min_pass_rate == 0.9
    assert alice.post(PAGE + "policy/", _form(min_pass_rate=0.5, reason="cases rewritten")).status_code == 302
    policy = GatePolicy.objects.get()
    assert policy.min_pass_rate == 0.5 and policy.floor_changes.get().source == "admin"


def test_a_reviewer_quarantines_a_case_with_a_reason_and_releases_it(actors, dataset):
    from datasets.models import GoldenCase

    case = GoldenCase.objects.create(dataset=dataset, name="refill_rare_drug", input="q")
    bob = _client(actors.bob)
    page = f"/p/acme/cases/{case.pk}/"
    assert bob.post(page, {"action": "quarantine", "quarantine_reason": ""}).status_code == 302
    assert not GoldenCase.objects.get(pk=case.pk).quarantined
    assert (
        "Case refill_rare_drug was not quarantined: write why in the &#x27;Why quarantine it&#x27; box"
        in bob.get(page).content.decode()
    )
    bob.post(page, {"action": "quarantine", "quarantine_reason": "supplier list changes this week"})
    case.refresh_from_db()
    assert (case.quarantined, case.quarantine_reason) == (True, "supplier list changes this week")
    bob.post(page, {"action": "release", "release_reason": "the supplier list is fixed"})
    assert not GoldenCase.objects.get(pk=case.pk).quarantined
    assert _client(actors.victor).post(page, {"action": "release"}).status_code == 403
