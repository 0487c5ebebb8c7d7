"""The judge settings page and the Django admin: admins only, and the key never shown back."""

import logging

import pytest
from django.test import Client

from scoring.judge.services import judge_configure
from scoring.models import JudgeConfig
from tests.base import user_create

KEY = "sk-page-7c6b5a4d3e2f1a0b"
URL = "/p/acme/settings/judge/"
pytestmark = pytest.mark.django_db


def client_for(user):
    client = Client()
    client.force_login(user)
    return client


def form_data(**overrides):
    data = {
        "endpoint": "https://api.openai.com/v1",
        "model": "gpt-4o-mini",
        "api_key": "",
        "timeout_seconds": "30",
        "max_concurrency": "4",
        "criteria_text": "answer_relevance: Does the answer address the question that was asked?\n\nno_hedging: Does it commit?",
    }
    data.update(overrides)
    return data


def configured(actors, **extra):
    return judge_configure(
        project=actors.acme, endpoint="https://api.openai.com/v1", model="gpt-4o-mini", api_key=KEY,
        criteria={"answer_relevance": "Relevant?"}, **extra,
    )  # fmt: skip


def test_it_shows_an_admin_that_a_key_is_set_but_never_the_key(actors):
    configured(actors)
    response = client_for(actors.alice).get(URL)
    html = response.content.decode()
    assert response.status_code == 200
    assert "a key is set" in html
    assert "gpt-4o-mini" in html and "answer_relevance: Relevant?" in html
    assert KEY not in html


def test_it_says_the_judge_is_off_until_configured(actors):
    html = client_for(actors.alice).get(URL).content.decode()
    assert "The judge is off" in html and "no key" in html


def test_it_saves_the_configuration_with_the_key_and_never_renders_or_logs_it(actors, caplog):
    caplog.set_level(logging.DEBUG)
    client = client_for(actors.alice)
    response = client.post(URL, form_data(api_key=KEY))
    assert response.status_code == 302
    config = JudgeConfig.objects.get(project=actors.acme)
    assert (config.endpoint, config.model, config.api_key) == ("https://api.openai.com/v1", "gpt-4o-mini", KEY)
    assert config.criteria == {
        "answer_relevance": "Does the answer address the question that was asked?",
        "no_hedging": "Does it commit?",
    }
    assert config.updated_by == actors.alice
    page = client.get(URL).content.decode()
    assert "The judge configuration was saved." in page
    assert KEY not in page
    assert KEY not in caplog.text


def test_it_keeps_the_key_when_the_field_is_left_blank_and_clears_it_on_request(actors):
    configured(actors)
    client = client_for(actors.alice)
    client.post(URL, form_data(model="gpt-4.1-mini"))
    config = JudgeConfig.objects.get(project=actors.acme)
    assert (config.model, config.api_key) == ("gpt-4.1-mini", KEY)
    client.post(URL, form_data(clear_api_key="on"))
    assert JudgeConfig.objects.get(project=actors.acme).api_key == ""


def test_it_shows_each_error_next_to_its_field_writes_nothing_and_does_not_echo_a_typed_key(actors):
    response = client_for(actors.alice).post(
        URL, form_data(api_key=KEY, timeout_seconds="0", endpoint="localhost:11434", criteria_text="exact_match: Same?")
    )
    html = response.content.decode()
    assert response.status_code == 200
    assert 'id="id_timeout_seconds_error"' in html and "must be from 1 to 300; got 0" in html
    assert 'id="id_endpoint_error"' in html and "must start with http:// or https://" in html
    assert (
        'id="id_criteria_text_error"' in html
        and "exact_match: &#x27;exact_match&#x27; is the id of a built-in scorer" in html
    )
    assert KEY not in html
    assert not JudgeConfig.objects.exists()


def test_it_names_a_criteria_line_it_cannot_read(actors):
    html = client_for(actors.alice).post(URL, form_data(criteria_text="tone Polite?")).content.decode()
    assert "line 1: write the criterion as id: question" in html


@pytest.mark.parametrize("who", ["bob", "victor"])
def test_only_project_admins_may_see_or_change_the_judge(actors, who):
    client = client_for(getattr(actors, who))
    assert client.get(URL).status_code == 403
    assert client.post(URL, form_data(api_key=KEY)).status_code == 403
    assert not JudgeConfig.objects.exists()


def test_an_outsider_gets_404(actors):
    client = client_for(actors.charlie)
    assert client.get(URL).status_code == 404
    assert client.post(URL, form_data()).status_code == 404
    assert client.get("/p/umbrella/settings/judge/").status_code == 200
    assert not JudgeConfig.objects.filter(project=actors.acme).exists()


def test_it_sends_anonymous_users_to_log_in(actors):
    response = Client().get(URL)
    assert response.status_code == 302 and "/login/" in response["Location"]


# The Django admin


@pytest.fixture
def staff(actors):
    return client_for(user_create("root", is_staff=True, is_superuser=True))


def test_the_admin_never_renders_the_stored_key(actors, staff):
    config = configured(actors)
    for url in ("/admin/scoring/judgeconfig/", f"/admin/scoring/judgeconfig/{config.pk}/change/"):
        html = staff.get(url).content.decode()
        assert "a key is set" in html
        assert KEY not in html


def test_the_admin_keeps_the_key_when_left_blank_and_validates_like_the_page(actors, staff):
    config = configured(actors)
    url = f"/admin/scoring/judgeconfig/{config.pk}/change/"
    data = {k: v for k, v in form_data(model="gpt-4.1").items() if k != "api_key"}
    response = staff.post(url, {**data, "new_api_key": ""})
    assert response.status_code == 302
    config.refresh_from_db()
    assert (config.model, config.api_key) == ("gpt-4.1", KEY)
    response = staff.post(url, {**data, "new_api_key": "sk-other-1234", "timeout_seconds": "301"})
    html = response.content.decode()
    assert response.status_code == 200 and "must be from 1 to 300; got 301" in html
    assert "sk-other-1234" not in html
    config.refresh_from_db()
    assert config.api_key == KEY


def test_the_admin_adds_a_configuration_through_the_service(actors, staff):
    data = {k: v for k, v in form_data().items() if k != "api_key"}
    response = staff.post("/admin/scoring/judgeconfig/add/", {**data, "project": actors.acme.pk, "new_api_key": KEY})
    assert response.status_code == 302
    config = JudgeConfig.objects.get(project=actors.acme)
    assert config.api_key == KEY and config.updated_by.username == "root"
    assert KEY not in staff.get(f"/admin/scoring/judgeconfig/{config.pk}/change/").content.decode()


def test_the_admin_shows_a_view_only_user_no_key_field_and_no_key(actors):
    from django.contrib.auth.models import Permission

    viewer = user_create("auditor", is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_judgeconfig"))
    config = configured(actors)
    response = client_for(viewer).get(f"/admin/scoring/judgeconfig/{config.pk}/change/")
    html = response.content.decode()
    assert response.status_code == 200
    assert "a key is set" in html and "gpt-4o-mini" in html
    assert KEY not in html and 'type="password"' not in html
