"""An admin manages keys, members and the quota in a real browser; other roles are kept out.

Chromium drives the settings page as an admin does: create a key (shown once) and use
it against the API, revoke it, invite someone by e-mail and open the one-time link in
another browser (a new account joins with the role), change that member's role, set
the quota, and read every change in the audit log. A reviewer and a viewer get 403.
"""

import pytest
from rest_framework.test import APIClient

from evalsite.models import Membership
from tests.base import actors_create
from tests.browser.conftest import log_in

pytestmark = pytest.mark.browser

SETTINGS = "/p/acme/settings/"


@pytest.fixture
def actors(transactional_db):
    return actors_create()


def _api_status(key):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    return client.get("/v1/api/datasets").status_code


def _key_created_used_and_revoked(page):
    page.fill("#key-name", "ci-main")
    page.click("#key-form button[type=submit]")
    full_key = page.inner_text("#new-key-value").strip()
    assert full_key.startswith("esk_")
    assert _api_status(full_key) == 200
    page.goto(SETTINGS)
    assert page.locator("#new-key-value").count() == 0
    assert full_key not in page.content()
    row = page.locator('tr[data-key="ci-main"]')
    assert row.locator(".last-used").inner_text() != "never"
    row.get_by_role("button", name="Revoke").click()
    page.wait_for_url(f"**{SETTINGS}")
    assert "revoked" in page.locator('tr[data-key="ci-main"]').inner_text()
    assert _api_status(full_key) == 401


def _invitation_made(page):
    page.fill("#invite-email", "erin@example.com")
    page.select_option("#invite-role", "viewer")
    page.click("#invite-form button[type=submit]")
    return page.inner_text("#invite-link").strip()


def _invitation_accepted(browser_page, link):
    """Open the link in a fresh browser context (no session) and create an account."""
    context = browser_page.context.browser.new_context()
    stranger = context.new_page()
    try:
        stranger.goto(link)
        stranger.fill("#id_username", "erin")
        stranger.fill("#id_password1", "a long pass phrase 42")
        stranger.fill("#id_password2", "a long pass phrase 42")
        stranger.click("#accept")
        stranger.wait_for_url("**/p/acme/runs/")
        assert stranger.goto(link).status == 404
    finally:
        context.close()


def test_an_admin_manages_keys_members_and_quota_from_the_settings_page(page, actors, artifacts_dir):
    log_in(page, "alice", SETTINGS)
    _key_created_used_and_revoked(page)

    link = _invitation_made(page)
    assert "/invite/" in link
    _invitation_accepted(page, link)
    erin = Membership.objects.get(project=actors.acme, user__username="erin")
    assert erin.role == "viewer"

    page.goto(SETTINGS)
    row = page.locator('tr[data-member="erin"]')
    row.locator("select").select_option("reviewer")
    row.get_by_role("button", name="Change role").click()
    page.wait_for_url(f"**{SETTINGS}")
    assert Membership.objects.get(pk=erin.pk).role == "reviewer"

    page.fill("#quota", "600")
    page.click("#quota-form button[type=submit]")
    page.wait_for_url(f"**{SETTINGS}")
    actors.acme.refresh_from_db()
    assert actors.acme.quota_per_minute == 600

    audit = page.inner_text("#audit-table")
    for line in (
        "created API key 'ci-main'",
        "revoked API key 'ci-main'",
        "invited erin@example.com as viewer",
        "erin joined as viewer",
        "changed erin from viewer to reviewer",
        "changed the quota from none to 600",
    ):
        assert line in audit
    page.screenshot(path=str(artifacts_dir / "settings-admin.png"), full_page=True)
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(SETTINGS)
    # At a phone's width the page does not scroll sideways; wide tables scroll in place.
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.screenshot(path=str(artifacts_dir / "settings-admin-390.png"), full_page=True)


@pytest.mark.parametrize("who", ["bob", "victor"])
def test_reviewers_and_viewers_get_403_and_no_link(page, actors, who):
    log_in(page, who, "/p/acme/runs/")
    assert page.locator('a[href="/p/acme/settings/"]').count() == 0
    response = page.goto(SETTINGS)
    assert response.status == 403
    assert "Generate" not in page.content() and page.locator("#key-form").count() == 0
