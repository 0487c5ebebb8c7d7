"""The dataset page: its gate policy shown and linked, and each case quarantined or released from its case list."""

import pytest
from django.contrib.messages import get_messages
from django.test import Client

from datasets.models import Dataset, GoldenCase
from gating.models import GatePolicy

PAGE = "/p/acme/datasets/refills/"


@pytest.fixture
def case(actors):
    dataset = Dataset.objects.create(project=actors.acme, name="refills")
    GatePolicy.objects.create(dataset=dataset, min_pass_rate=0.9, trials=3, input_match="require")
    return GoldenCase.objects.create(dataset=dataset, name="refill_rare_drug", input="q")


def _client(user):
    client = Client()
    client.force_login(user)
    return client


def _messages(response):
    return [str(m) for m in get_messages(response.wsgi_request)]


def test_the_dataset_page_shows_the_policy_and_links_to_it(actors, case):
    html = _client(actors.victor).get(PAGE).content.decode()
    assert '<a href="#policy">Gate policy (revision 0)</a>' in html
    assert '<section id="policy" aria-labelledby="policy-heading">\n<h2 id="policy-heading">Gate policy</h2>' in html
    assert "<dt>Input check</dt><dd>require" in html and "Only a project admin changes the gate policy" in html
    admin = _client(actors.alice).get(PAGE).content.decode()
    assert 'id="policy-form"' in admin and "needs the reason box filled in" in admin


def test_a_reviewer_quarantines_from_the_case_list_and_comes_back_to_it(actors, case):
    bob = _client(actors.bob)
    html = bob.get(PAGE).content.decode()
    assert f'id="quarantine-form-{case.pk}"' in html and f'for="quarantine-reason-{case.pk}"' in html
    response = bob.post(
        f"/p/acme/cases/{case.pk}/",
        {"action": "quarantine", "quarantine_reason": "supplier list changes", "back": "dataset", "status": "active"},
    )
    assert response.status_code == 302 and response["Location"] == f"{PAGE}?status=active#case-{case.pk}"
    assert _messages(response) == [
        "Case refill_rare_drug is quarantined: the gate runs and reports it, and does not count it."
    ]
    case.refresh_from_db()
    assert (case.quarantined, case.quarantine_reason) == (True, "supplier list changes")
    assert case.revisions.last().new == {"quarantined": True, "quarantine_reason": "supplier list changes"}
    listed = bob.get(PAGE).content.decode()
    assert '<span class="badge warn">quarantined</span> <span class="quarantine-reason">supplier list changes' in listed
    assert 'aria-label="Release refill_rare_drug from quarantine"' in listed


def test_a_quarantine_without_a_reason_names_the_case_and_the_box_and_writes_nothing(actors, case):
    response = _client(actors.bob).post(
        f"/p/acme/cases/{case.pk}/", {"action": "quarantine", "quarantine_reason": "  ", "back": "dataset"}
    )
    assert response["Location"] == f"{PAGE}#case-{case.pk}"
    assert _messages(response) == [
        "Case refill_rare_drug was not quarantined: write why in the 'Why quarantine it' box, then try again."
    ]
    case.refresh_from_db()
    assert not case.quarantined and case.version == 1


def test_release_from_the_list_counts_the_case_again_and_keeps_why_in_its_history(actors, case):
    GoldenCase.objects.filter(pk=case.pk).update(quarantined=True, quarantine_reason="flaky")
    bob = _client(actors.bob)
    response = bob.post(
        f"/p/acme/cases/{case.pk}/", {"action": "release", "release_reason": "fixed upstream", "back": "dataset"}
    )
    assert _messages(response) == ["Case refill_rare_drug is released from quarantine: the gate counts it again."]
    case.refresh_from_db()
    assert (case.quarantined, case.quarantine_reason) == (False, "")
    assert case.revisions.last().reason == "fixed upstream"
    assert '<dd class="revision-reason">fixed upstream</dd>' in bob.get(f"/p/acme/cases/{case.pk}/").content.decode()


def test_a_release_without_a_reason_names_the_case_and_the_box_and_writes_nothing(actors, case):
    GoldenCase.objects.filter(pk=case.pk).update(quarantined=True, quarantine_reason="flaky")
    response = _client(actors.bob).post(f"/p/acme/cases/{case.pk}/", {"action": "release", "back": "case"})
    assert _messages(response) == [
        "Case refill_rare_drug was not released: write why in the 'Why release it' box, then try again."
    ]
    case.refresh_from_db()
    assert case.quarantined and case.version == 1


def test_the_case_page_quarantines_and_stays_on_the_case(actors, case):
    bob = _client(actors.bob)
    assert 'id="quarantine-heading"' in bob.get(f"/p/acme/cases/{case.pk}/").content.decode()
    response = bob.post(
        f"/p/acme/cases/{case.pk}/", {"action": "quarantine", "quarantine_reason": "flaky", "back": "case"}
    )
    assert response["Location"] == f"/p/acme/cases/{case.pk}/"


def test_a_viewer_sees_no_quarantine_form_and_cannot_post_one(actors, case):
    viewer = _client(actors.victor)
    assert "quarantine-form-" not in viewer.get(PAGE).content.decode()
    assert (
        viewer.post(f"/p/acme/cases/{case.pk}/", {"action": "quarantine", "quarantine_reason": "x"}).status_code == 403
    )
    assert not GoldenCase.objects.get(pk=case.pk).quarantined


def test_a_status_that_is_not_a_tab_is_not_carried_back(actors, case):
    response = _client(actors.bob).post(
        f"/p/acme/cases/{case.pk}/", {"action": "release", "back": "dataset", "status": "x#y"}
    )
    assert response["Location"] == f"{PAGE}#case-{case.pk}"
