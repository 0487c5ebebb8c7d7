"""Configuring a project's judge: the one service, its rules, and what the database holds."""

import logging

import pytest
from django.db import IntegrityError, transaction

from evalsite.errors import Invalid
from evalsite.projects import project_create
from scoring.judge.selectors import judge_config_get, judge_get
from scoring.judge.services import KEEP, judge_configure
from scoring.models import JudgeConfig

KEY = "sk-config-5a4b3c2d1e0f"
pytestmark = pytest.mark.django_db


@pytest.fixture
def acme():
    # Most rules need a project and no users (hashing passwords is the slow part of actors).
    return project_create(slug="acme")


def configure(project, **overrides):
    values = {
        "project": project,
        "endpoint": "http://localhost:11434/v1",
        "model": "qwen2.5:14b",
        "criteria": {"answer_relevance": "Does the answer address the question that was asked?"},
        "actor": None,
    }
    values.update(overrides)
    return judge_configure(**values)


def fields_of(exc):
    return {e["field"] for e in exc.value.errors}


def test_it_is_off_until_configured(acme):
    assert judge_get(acme) is None
    configure(acme, endpoint="", model="")
    assert judge_get(acme) is None
    configure(acme)
    judge = judge_get(acme)
    assert (judge.endpoint, judge.model, judge.timeout_seconds, judge.max_concurrency) == (
        "http://localhost:11434/v1", "qwen2.5:14b", 30, 4
    )  # fmt: skip
    assert judge.api_key == ""


def test_it_stores_the_configuration_with_who_changed_it(actors):
    config = configure(actors.acme, actor=actors.alice, api_key=KEY, timeout_seconds=60, max_concurrency=8)
    config.refresh_from_db()
    assert (config.api_key, config.timeout_seconds, config.max_concurrency) == (KEY, 60, 8)
    assert config.updated_by == actors.alice
    assert config.criteria == {"answer_relevance": "Does the answer address the question that was asked?"}


def test_it_keeps_the_stored_key_unless_told_to_change_or_clear_it(acme):
    configure(acme, api_key=KEY)
    assert configure(acme, model="llama3.1:8b").api_key == KEY
    assert configure(acme, api_key=KEEP).api_key == KEY
    assert configure(acme, api_key="sk-new-1234").api_key == "sk-new-1234"
    assert configure(acme, api_key="").api_key == ""


def test_it_keeps_unnamed_settings_and_replaces_the_criteria_whole(acme):
    configure(acme, timeout_seconds=90, criteria={"a_one": "A?", "b_two": "B?"})
    config = judge_configure(project=acme, endpoint="http://x:1/v1", model="m")
    assert (config.timeout_seconds, config.criteria) == (90, {"a_one": "A?", "b_two": "B?"})
    assert configure(acme, criteria={"c_three": "C?"}).criteria == {"c_three": "C?"}


@pytest.mark.parametrize("timeout", [0, 301, -5, "30", 2.5, True, None])
def test_it_refuses_a_timeout_outside_one_to_three_hundred(acme, timeout):
    with pytest.raises(Invalid) as exc:
        configure(acme, timeout_seconds=timeout)
    assert fields_of(exc) == {"timeout_seconds"}
    assert judge_config_get(acme) is None  # nothing half written


@pytest.mark.parametrize("timeout", [1, 300])
def test_it_accepts_the_timeout_bounds(acme, timeout):
    assert configure(acme, timeout_seconds=timeout).timeout_seconds == timeout


@pytest.mark.parametrize("limit", [0, 33])
def test_it_refuses_a_concurrency_outside_one_to_thirty_two(acme, limit):
    with pytest.raises(Invalid) as exc:
        configure(acme, max_concurrency=limit)
    assert fields_of(exc) == {"max_concurrency"}


@pytest.mark.parametrize("builtin", ["exact_match", "answered", "tool_choice", "tool_output_schema"])
def test_it_refuses_a_criterion_id_that_collides_with_a_built_in_scorer(acme, builtin):
    with pytest.raises(Invalid) as exc:
        configure(acme, criteria={builtin: "Is it right?"})
    assert exc.value.errors == [
        {"field": f"criteria.{builtin}", "message": f"{builtin!r} is the id of a built-in scorer; choose another id"}
    ]


@pytest.mark.parametrize("criterion_id", ["Relevance", "answer-relevance", "1st", "", "x" * 65, "with space"])
def test_it_refuses_a_criterion_id_that_is_not_lowercase_snake_case(acme, criterion_id):
    with pytest.raises(Invalid) as exc:
        configure(acme, criteria={criterion_id: "Is it right?"})
    assert fields_of(exc) == {f"criteria.{criterion_id}"}


@pytest.mark.parametrize("question", ["", "   ", "x" * 2001, "two\nlines", 42])
def test_it_refuses_an_empty_long_or_multi_line_question(acme, question):
    with pytest.raises(Invalid) as exc:
        configure(acme, criteria={"tone": question})
    assert fields_of(exc) == {"criteria.tone"}


@pytest.mark.parametrize(
    "endpoint",
    [
        "localhost:11434/v1",
        "ftp://example.com/v1",
        "http://",
        "http://user:pw@example.com/v1",
        "https://api.example.com/v1?key=abc",
        "http://example.com:99999/v1",
        "http://exa mple.com/v1",
    ],
)
def test_it_refuses_an_endpoint_that_is_not_an_http_base_url(acme, endpoint):
    with pytest.raises(Invalid) as exc:
        configure(acme, endpoint=endpoint)
    assert fields_of(exc) == {"endpoint"}


@pytest.mark.parametrize("endpoint", ["http://ollama:11434/v1", "https://api.openai.com/v1/", "http://[::1]:8080/v1"])
def test_it_accepts_local_and_hosted_endpoints(acme, endpoint):
    assert configure(acme, endpoint=endpoint).endpoint == endpoint


def test_it_wants_endpoint_and_model_together(acme):
    with pytest.raises(Invalid) as exc:
        configure(acme, model="")
    assert fields_of(exc) == {"model"}


def test_it_refuses_a_key_that_cannot_travel_in_a_header_without_echoing_it(acme):
    with pytest.raises(Invalid) as exc:
        configure(acme, api_key="sk-abc def\n")
    assert fields_of(exc) == {"api_key"}
    assert "sk-abc" not in str(exc.value.errors) and "sk-abc" not in exc.value.detail


def test_it_lists_every_problem_at_once(acme):
    with pytest.raises(Invalid) as exc:
        configure(acme, endpoint="nope", timeout_seconds=0, criteria={"exact_match": ""})
    assert fields_of(exc) == {"endpoint", "timeout_seconds", "criteria.exact_match"}


def test_it_logs_what_changed_but_never_the_key(actors, caplog):
    caplog.set_level(logging.INFO, logger="evalsite.audit")
    configure(actors.acme, actor=actors.alice, api_key=KEY)
    assert "judge of project acme created by alice" in caplog.text
    assert "api_key set" in caplog.text
    assert KEY not in caplog.text


def test_it_never_shows_the_key_in_the_rows_text(acme):
    config = configure(acme, api_key=KEY)
    assert KEY not in str(config) and KEY not in repr(config)
    assert KEY not in repr(judge_get(acme))


def test_the_database_keeps_the_ranges_whatever_writes_the_row(acme):
    for field, value in (("timeout_seconds", 301), ("timeout_seconds", 0), ("max_concurrency", 33)):
        with pytest.raises(IntegrityError), transaction.atomic():
            JudgeConfig.objects.create(project=acme, endpoint="http://x/v1", model="m", **{field: value})


def test_one_project_has_one_judge_configuration(acme):
    configure(acme)
    configure(acme, model="other")
    assert JudgeConfig.objects.filter(project=acme).count() == 1


@pytest.mark.parametrize(
    "endpoint",
    [
        "http://169.254.169.254/latest/v1",  # the EC2/GCP/Azure metadata service
        "http://[fd00:ec2::254]/v1",  # EC2's metadata service over IPv6
        "http://metadata.google.internal/computeMetadata/v1",
        "http://169.254.10.20:8080/v1",  # link-local
        "http://[fe80::1]:8080/v1",
        "http://[::ffff:169.254.169.254]/v1",  # the metadata address written as IPv6
        "http://0.0.0.0:8080/v1",
        "http://224.0.0.1/v1",
    ],
)
def test_it_refuses_a_link_local_metadata_unspecified_or_multicast_endpoint_even_when_private_ones_are_allowed(
    acme, endpoint, settings
):
    settings.EVALSITE_OUTBOUND_ALLOW_PRIVATE = True
    with pytest.raises(Invalid) as exc:
        configure(acme, endpoint=endpoint)
    assert fields_of(exc) == {"endpoint"}
    assert "is not an address the server may call" in exc.value.errors[0]["message"]
    assert judge_config_get(acme) is None


@pytest.mark.parametrize(
    "endpoint", ["http://127.0.0.1:11434/v1", "http://localhost:11434/v1", "http://[::1]:8080/v1", "http://10.0.0.7/v1"]
)
def test_it_refuses_a_loopback_or_private_endpoint_unless_the_server_allows_them(acme, endpoint, settings):
    settings.EVALSITE_OUTBOUND_ALLOW_PRIVATE = False
    with pytest.raises(Invalid) as exc:
        configure(acme, endpoint=endpoint)
    assert fields_of(exc) == {"endpoint"}
    assert "EVALSITE_OUTBOUND_ALLOW_PRIVATE=1" in exc.value.errors[0]["message"]
    settings.EVALSITE_OUTBOUND_ALLOW_PRIVATE = True
    assert configure(acme, endpoint=endpoint).endpoint == endpoint
    assert judge_get(acme).allow_private is True
