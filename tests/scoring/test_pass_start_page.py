"""Starting a scoring pass from the pages: count the runs first, then start; same rules as the API."""

import pytest
from django.test import Client

from scoring.models import ScoringPass
from tests.factories import run_payload


@pytest.fixture
def runs(actors):
    batch = [run_payload(f"r{i}", experiment="v1" if i < 3 else "v2") for i in range(5)]
    assert actors.api().post("/v1/api/traces", {"traces": batch}, format="json").status_code == 201
    return actors


def _client(user):
    client = Client()
    client.force_login(user)
    return client


def test_counting_shows_how_many_runs_the_pass_would_score_and_starts_nothing(runs):
    response = _client(runs.bob).get("/p/acme/passes/new/?scorers=answered&scorers=no_errors&experiment=v1")
    assert response.status_code == 200
    assert "<strong>3</strong> runs would be scored" in response.content.decode()
    assert not ScoringPass.objects.exists()


def test_starting_stores_the_pass_and_opens_its_page(runs):
    response = _client(runs.bob).post("/p/acme/passes/new/", {"scorers": ["answered"], "experiment": "v2"})
    scoring_pass = ScoringPass.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/p/acme/passes/{scoring_pass.pk}/"
    assert scoring_pass.scorers == ["answered"] and scoring_pass.requested_by == runs.bob


def test_a_request_without_scorers_is_a_400_naming_the_field(runs):
    response = _client(runs.bob).post("/p/acme/passes/new/", {"experiment": "v1"})
    assert response.status_code == 400 and "This field is required" in response.content.decode()
    assert not ScoringPass.objects.exists()


def test_a_scorer_that_needs_config_is_refused_with_the_services_message(runs):
    response = _client(runs.bob).get("/p/acme/passes/new/?scorers=contains")
    assert response.status_code == 400
    html = response.content.decode()
    assert 'role="alert"' in html and "would be scored" not in html


def test_a_viewer_may_count_but_not_start(runs):
    viewer = _client(runs.victor)
    assert "Start the pass" not in viewer.get("/p/acme/passes/new/").content.decode()
    assert viewer.post("/p/acme/passes/new/", {"scorers": ["answered"]}).status_code == 403
    assert not ScoringPass.objects.exists()


def test_a_pass_page_shows_its_config_as_settings_not_a_python_dict(runs):
    from scoring.passes.services import pass_start

    scoring_pass = pass_start(
        project=runs.acme, data={"scorers": ["contains"], "config": {"contains": {"value": "EUR", "mode": "all"}}}
    )
    html = _client(runs.victor).get(f"/p/acme/passes/{scoring_pass.pk}/").content.decode()
    settings = html[html.index('<dl class="settings">') :]
    assert settings.startswith('<dl class="settings"><dt>contains</dt>')
    assert "<code>value</code> = <code>&quot;EUR&quot;</code>" in settings
    assert "{&#x27;value&#x27;" not in html
