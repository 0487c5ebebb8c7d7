"""The project settings page: keys, members, invitations and quota, by admins only, audited."""

import re

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from evalsite.models import ApiKey, AuditEntry, Invitation, Membership, Role
from tests.base import user_create

SETTINGS = "/p/acme/settings/"


def _client(user):
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def alice(actors):
    return _client(actors.alice)


def _audit(actors):
    return list(AuditEntry.objects.filter(project=actors.acme).values_list("actor_name", "action"))


@pytest.mark.parametrize("who", ["bob", "victor"])
@pytest.mark.parametrize(
    "method, path",
    [
        ("get", SETTINGS),
        ("post", SETTINGS + "keys/"),
        ("post", SETTINGS + "members/"),
        ("post", SETTINGS + "invitations/"),
        ("post", SETTINGS + "quota/"),
    ],
)
def test_it_answers_403_to_reviewers_and_viewers(actors, who, method, path):
    response = getattr(_client(getattr(actors, who)), method)(path, {"name": "x", "quota_per_minute": "1"})
    assert response.status_code == 403
    assert not AuditEntry.objects.exists()
    assert ApiKey.objects.filter(project=actors.acme).count() == 1


def test_it_answers_404_to_an_outsider(actors):
    assert _client(actors.charlie).get(SETTINGS).status_code == 404
    assert _client(actors.charlie).post(SETTINGS + "keys/", {"name": "x"}).status_code == 404


def test_a_reviewer_sees_no_settings_link_an_admin_does(actors, alice):
    assert b"/p/acme/settings/" in alice.get("/p/acme/runs/").content
    assert b"/p/acme/settings/" not in _client(actors.bob).get("/p/acme/runs/").content


def test_a_new_key_is_shown_once_works_and_is_audited(actors, alice):
    response = alice.post(SETTINGS + "keys/", {"name": "ci-main", "scopes": ["ingest", "gate"]})
    assert response.status_code == 201
    full_key = re.search(rb"esk_[a-z0-9]{10}_[A-Za-z0-9_-]{43}", response.content).group().decode()
    assert actors.api(full_key).get("/v1/api/datasets").status_code == 200
    page = alice.get(SETTINGS).content.decode()
    assert full_key not in page
    assert "ci-main" in page
    assert "never" not in page.split('data-key="ci-main"')[1].split("</tr>")[0]  # last used: now
    assert _audit(actors) == [("alice", "key.create")]


def test_a_key_gets_the_scopes_ticked_and_the_table_shows_them(actors, alice):
    assert alice.post(SETTINGS + "keys/", {"name": "curator", "scopes": ["label", "curate"]}).status_code == 201
    assert ApiKey.objects.get(name="curator").scopes == ["curate", "label"]
    ApiKey.objects.filter(name="ci").update(full_access=True)
    page = alice.get(SETTINGS).content.decode()
    assert "curate, label" in page.split('data-key="curator"')[1].split("</tr>")[0]
    assert "full access (older key)" in page.split('data-key="ci"')[1].split("</tr>")[0]
    assert 'name="scopes" value="ingest" checked' in page and 'value="admin">' in page


def test_a_key_with_no_scope_ticked_is_refused_naming_the_field(actors, alice):
    response = alice.post(SETTINGS + "keys/", {"name": "empty"})
    assert response.status_code == 400
    assert b"scopes: choose at least one scope" in response.content
    assert not ApiKey.objects.filter(name="empty").exists()


def test_a_key_without_a_name_is_refused_naming_the_field(actors, alice):
    response = alice.post(SETTINGS + "keys/", {"name": "  "})
    assert response.status_code == 400
    assert b"name: is required." in response.content
    assert ApiKey.objects.filter(project=actors.acme).count() == 1
    assert not AuditEntry.objects.exists()


def test_a_revoked_key_is_refused_by_the_api(actors, alice):
    key = ApiKey.objects.get(project=actors.acme)
    assert alice.post(SETTINGS + f"keys/{key.pk}/revoke/").status_code == 302
    assert actors.api().get("/v1/api/datasets").status_code == 401
    assert b"revoked" in alice.get(SETTINGS).content
    assert _audit(actors) == [("alice", "key.revoke")]


def test_another_projects_key_cannot_be_revoked_from_here(actors, alice):
    theirs = ApiKey.objects.get(project=actors.umbrella)
    assert alice.post(SETTINGS + f"keys/{theirs.pk}/revoke/").status_code == 404
    assert ApiKey.objects.get(pk=theirs.pk).revoked_at is None


def test_an_existing_user_is_added_by_email_and_their_role_changed(actors, alice):
    dora = user_create("dora", email="dora@example.com")
    assert alice.post(SETTINGS + "members/", {"user": "DORA@example.com", "role": "viewer"}).status_code == 302
    membership = Membership.objects.get(project=actors.acme, user=dora)
    assert membership.role == Role.VIEWER
    alice.post(SETTINGS + f"members/{membership.pk}/", {"action": "role", "role": "reviewer"})
    assert Membership.objects.get(pk=membership.pk).role == Role.REVIEWER
    alice.post(SETTINGS + f"members/{membership.pk}/", {"action": "remove"})
    assert not Membership.objects.filter(pk=membership.pk).exists()
    assert [a for _, a in _audit(actors)] == ["member.remove", "member.role", "member.add"]


def test_an_unknown_user_or_role_is_a_400_naming_the_field(actors, alice):
    response = alice.post(SETTINGS + "members/", {"user": "nobody", "role": "viewer"})
    assert (response.status_code, b"user: no single user" in response.content) == (400, True)
    response = alice.post(SETTINGS + "members/", {"user": "charlie", "role": "owner"})
    assert (response.status_code, b"role: must be one of" in response.content) == (400, True)
    assert not AuditEntry.objects.exists()


def test_the_last_admin_can_be_neither_demoted_nor_removed(actors, alice):
    mine = Membership.objects.get(project=actors.acme, user=actors.alice)
    assert alice.post(SETTINGS + f"members/{mine.pk}/", {"action": "role", "role": "viewer"}).status_code == 409
    assert alice.post(SETTINGS + f"members/{mine.pk}/", {"action": "remove"}).status_code == 409
    assert Membership.objects.get(pk=mine.pk).role == Role.ADMIN


def _invite(alice, email="erin@example.com", role="reviewer"):
    response = alice.post(SETTINGS + "invitations/", {"email": email, "role": role})
    assert response.status_code == 201
    return re.search(rb"http://testserver(/invite/[A-Za-z0-9_-]+/)", response.content).group(1).decode()


def test_an_invitation_link_makes_an_account_and_works_once(actors, alice):
    link = _invite(alice)
    assert Invitation.objects.get().token_hash not in link
    stranger = Client()
    response = stranger.post(
        link, {"username": "erin", "password1": "a long pass phrase 42", "password2": "a long pass phrase 42"}
    )
    assert response.status_code == 302
    erin = get_user_model().objects.get(username="erin")
    assert (erin.email, Membership.objects.get(project=actors.acme, user=erin).role) == ("erin@example.com", "reviewer")
    assert stranger.get("/p/acme/runs/").status_code == 200
    assert Client().get(link).status_code == 404
    assert [a for _, a in _audit(actors)] == ["invite.accept", "invite.create"]


def test_a_signed_in_user_accepts_and_a_withdrawn_link_is_dead(actors, alice):
    link = _invite(alice, "charlie@example.com", "viewer")
    assert _client(actors.charlie).post(link).status_code == 302
    assert Membership.objects.get(project=actors.acme, user=actors.charlie).role == Role.VIEWER
    second = _invite(alice, "someone@example.com")
    alice.post(SETTINGS + f"invitations/{Invitation.objects.get(email='someone@example.com').pk}/revoke/")
    assert Client().get(second).status_code == 404


def test_a_bad_email_is_refused(actors, alice):
    response = alice.post(SETTINGS + "invitations/", {"email": "not-an-address", "role": "viewer"})
    assert (response.status_code, b"email: is not an e-mail address" in response.content) == (400, True)
    assert not Invitation.objects.exists()


def test_the_quota_is_set_checked_and_audited(actors, alice):
    assert alice.post(SETTINGS + "quota/", {"quota_per_minute": "600"}).status_code == 302
    actors.acme.refresh_from_db()
    assert actors.acme.quota_per_minute == 600
    for bad in ("-1", "many", "99999999999", "\u0661\u0662", "1_000", "+5"):
        response = alice.post(SETTINGS + "quota/", {"quota_per_minute": bad})
        assert (response.status_code, b"quota_per_minute: must be" in response.content) == (400, True)
    actors.acme.refresh_from_db()
    assert actors.acme.quota_per_minute == 600
    page = alice.get(SETTINGS).content.decode()
    assert "changed the quota from none to 600 records per minute" in page


def test_retention_is_set_shown_and_audited(actors, alice):
    assert alice.post(SETTINGS + "retention/", {"retention_days": "30"}).status_code == 302
    actors.acme.refresh_from_db()
    assert actors.acme.retention_days == 30
    page = alice.get(SETTINGS).content.decode()
    assert "kept 30 days" in page and "changed run retention from forever to 30 days" in page
    for bad in ("soon", "\u0663\u0660", "3_0"):
        response = alice.post(SETTINGS + "retention/", {"retention_days": bad})
        assert (response.status_code, b"retention_days: must be a whole number" in response.content) == (400, True)
    actors.acme.refresh_from_db()
    assert actors.acme.retention_days == 30
    assert alice.post(SETTINGS + "retention/", {"retention_days": ""}).status_code == 302
    actors.acme.refresh_from_db()
    assert actors.acme.retention_days is None
    assert _client(actors.victor).post(SETTINGS + "retention/", {"retention_days": "1"}).status_code == 403


def test_a_feedback_only_key_can_be_issued_from_the_settings_page(actors, alice):
    assert 'name="scopes" value="feedback">' in alice.get(SETTINGS).content.decode()
    assert alice.post(SETTINGS + "keys/", {"name": "widget", "scopes": ["feedback"]}).status_code == 201
    assert ApiKey.objects.get(name="widget").scopes == ["feedback"]


def test_an_admin_lists_the_feedback_origins_and_a_bad_one_is_named(actors, alice):
    body = {"feedback_origins": "https://App.example.com/\nhttp://localhost:3000, https://app.example.com"}
    assert alice.post(SETTINGS + "feedback-origins/", body).status_code == 302
    actors.acme.refresh_from_db()
    assert actors.acme.feedback_origins == ["https://app.example.com", "http://localhost:3000"]
    for bad in ("ftp://files.example.com", "https://app.example.com/widget", "not an origin"):
        response = alice.post(SETTINGS + "feedback-origins/", {"feedback_origins": bad})
        assert (response.status_code, b"feedback_origins: " in response.content) == (400, True), bad
    actors.acme.refresh_from_db()
    assert actors.acme.feedback_origins == ["https://app.example.com", "http://localhost:3000"]
    page = alice.get(SETTINGS).content.decode()
    assert "https://app.example.com\nhttp://localhost:3000\n</textarea>" in page
    assert ("alice", "feedback_origins.set") in _audit(actors)


def test_a_reviewer_cannot_change_the_feedback_origins(actors):
    response = _client(actors.bob).post(SETTINGS + "feedback-origins/", {"feedback_origins": "https://a.example.com"})
    assert response.status_code in (403, 404)
    actors.acme.refresh_from_db()
    assert actors.acme.feedback_origins == []
