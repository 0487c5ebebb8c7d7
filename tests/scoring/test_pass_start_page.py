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


def test_the_count_tells_how_many_runs_match_beyond_the_limit(runs):
    response = _client(runs.bob).get("/p/acme/passes/new/?scorers=answered&limit=2")
    html = response.content.decode()
    assert response.status_code == 200
    assert '<strong>2</strong> runs would be scored, the newest of the <strong data-field="matching">5</strong>' in html


def test_the_default_limit_is_named_and_counted_past(runs):
    from datetime import UTC, datetime

    from datasets.models import Trace
    from scoring.selection.requests import DEFAULT_LIMIT

    Trace.objects.bulk_create(
        Trace(
            project=runs.acme, trace_id=f"bulk-{i}", input="q", output="a", started_at=datetime(2026, 1, 1, tzinfo=UTC)
        )
        for i in range(DEFAULT_LIMIT)
    )
    html = _client(runs.bob).get("/p/acme/passes/new/?scorers=answered").content.decode()
    assert f"<strong>{DEFAULT_LIMIT}</strong> runs would be scored" in html
    assert f'<strong data-field="matching">{DEFAULT_LIMIT + 5}</strong> that match' in html
    assert f"empty: the newest {DEFAULT_LIMIT:,}" in html


def test_a_scorer_with_settings_has_their_fields_and_they_configure_the_pass(runs):
    html = _client(runs.bob).get("/p/acme/passes/new/").content.decode()
    assert 'name="tool_succeeded__tool"' in html and "tool (required)" in html
    assert 'name="latency_budget__ms"' in html and 'name="regex__negate"' in html
    response = _client(runs.bob).post(
        "/p/acme/passes/new/",
        {"scorers": ["tool_succeeded", "latency_budget"], "tool_succeeded__tool": "quote_room",
         "latency_budget__ms": "900", "action": "start"},
    )  # fmt: skip
    assert response.status_code == 302, response.content.decode()
    scoring_pass = ScoringPass.objects.get()
    assert scoring_pass.config == {"tool_succeeded": {"tool": "quote_room"}, "latency_budget": {"ms": 900}}


def test_a_scorer_ticked_without_its_required_setting_names_the_field(runs):
    response = _client(runs.bob).post("/p/acme/passes/new/", {"scorers": ["tool_succeeded"], "action": "count"})
    html = response.content.decode()
    assert response.status_code == 400
    assert 'id="id_tool_succeeded__tool-error"' in html
    assert "tool_succeeded needs its settings: fill in tool, or choose runs linked to cases that configure it." in html
    assert "config.tool_succeeded" not in html and not ScoringPass.objects.exists()


def test_a_bad_setting_is_shown_next_to_its_field(runs):
    response = _client(runs.bob).post(
        "/p/acme/passes/new/", {"scorers": ["contains"], "contains__value": "[1]", "action": "count"}
    )
    assert response.status_code == 400
    assert 'id="id_contains__value-error"' in response.content.decode()


def test_counting_by_post_starts_nothing_and_a_viewer_counts_by_get_without_a_csrf_token(runs):
    counted = _client(runs.bob).post("/p/acme/passes/new/", {"scorers": ["answered"], "action": "count"})
    assert counted.status_code == 200 and "<strong>5</strong> runs would be scored" in counted.content.decode()
    assert not ScoringPass.objects.exists()
    viewer = _client(runs.victor).get("/p/acme/passes/new/?scorers=answered").content.decode()
    form = viewer[viewer.index('aria-label="Scoring pass"') - 30 :]
    assert '<form method="get"' in form and "csrfmiddlewaretoken" not in form[: form.index("</form>")]


def test_a_setting_left_at_its_default_is_not_sent_and_a_missing_one_is_named(runs):
    untouched = _client(runs.bob).post(
        "/p/acme/passes/new/", {"scorers": ["answered"], "contains__mode": "", "action": "start"}
    )
    assert untouched.status_code == 302 and ScoringPass.objects.get().config == {}
    response = _client(runs.bob).post(
        "/p/acme/passes/new/", {"scorers": ["contains"], "contains__mode": "any", "action": "count"}
    )
    assert response.status_code == 400
    html = response.content.decode()
    assert 'id="id_contains__value-error">Required when contains is ticked.' in html
