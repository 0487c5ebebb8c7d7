"""``manage.py configure_judge``: the operators' way to set a project's judge."""

import io
import logging

import pytest
from django.core.management import CommandError, call_command

from evalsite.projects import project_create
from scoring.models import JudgeConfig

KEY = "sk-cli-0a1b2c3d4e5f6a7b"
pytestmark = pytest.mark.django_db


@pytest.fixture
def acme():
    return project_create(slug="acme")


def configure_judge(*args):
    out = io.StringIO()
    call_command("configure_judge", *args, stdout=out, stderr=out)
    return out.getvalue()


def test_it_configures_a_hosted_judge_with_the_key_from_an_environment_variable(acme, monkeypatch, caplog):
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    out = configure_judge(
        "acme", "--endpoint", "https://api.openai.com/v1", "--model", "gpt-4o-mini",
        "--api-key-env", "OPENAI_API_KEY", "--timeout-seconds", "20",
        "--criterion", "answer_relevance=Does the answer address the question that was asked?",
        "--criterion", "no_hedging=Does the answer commit, rather than hedge?",
    )  # fmt: skip
    config = JudgeConfig.objects.get(project=acme)
    assert (config.endpoint, config.model, config.api_key, config.timeout_seconds) == (
        "https://api.openai.com/v1", "gpt-4o-mini", KEY, 20
    )  # fmt: skip
    assert config.criteria == {
        "answer_relevance": "Does the answer address the question that was asked?",
        "no_hedging": "Does the answer commit, rather than hedge?",
    }
    assert "api key          set (from $OPENAI_API_KEY)" in out
    assert "no_hedging: Does the answer commit, rather than hedge?" in out
    assert KEY not in out
    assert KEY not in caplog.text


def test_it_configures_a_local_judge_without_a_key(acme):
    out = configure_judge("acme", "--endpoint", "http://localhost:11434/v1", "--model", "qwen2.5:14b")
    config = JudgeConfig.objects.get(project=acme)
    assert (config.api_key, config.timeout_seconds, config.criteria) == ("", 30, {})
    assert "api key          none (no Authorization header)" in out


def test_it_names_the_environment_variable_when_it_is_not_set(acme, monkeypatch):
    monkeypatch.delenv("JUDGE_KEY", raising=False)
    with pytest.raises(CommandError, match="The environment variable JUDGE_KEY is not set"):
        configure_judge("acme", "--endpoint", "http://x:1/v1", "--model", "m", "--api-key-env", "JUDGE_KEY")
    assert not JudgeConfig.objects.exists()


def test_it_refuses_an_empty_key_variable_rather_than_clearing_the_key(acme, monkeypatch):
    monkeypatch.setenv("JUDGE_KEY", KEY)
    configure_judge("acme", "--endpoint", "http://x:1/v1", "--model", "m", "--api-key-env", "JUDGE_KEY")
    monkeypatch.setenv("JUDGE_KEY", "")
    with pytest.raises(CommandError, match="JUDGE_KEY is empty"):
        configure_judge("acme", "--endpoint", "http://x:1/v1", "--model", "m", "--api-key-env", "JUDGE_KEY")
    assert JudgeConfig.objects.get(project=acme).api_key == KEY


def test_it_never_takes_the_key_from_the_command_line(acme):
    with pytest.raises(CommandError, match="never taken from the command line") as exc:
        configure_judge("acme", "--endpoint", "http://x:1/v1", "--model", "m", "--api-key", KEY)
    assert KEY not in str(exc.value)
    assert not JudgeConfig.objects.exists()


def test_it_keeps_the_stored_key_and_criteria_unless_given_and_clears_the_key_on_request(acme, monkeypatch):
    monkeypatch.setenv("JUDGE_KEY", KEY)
    configure_judge(
        "acme",
        "--endpoint",
        "http://x:1/v1",
        "--model",
        "m",
        "--api-key-env",
        "JUDGE_KEY",
        "--criterion",
        "tone=Polite?",
    )
    configure_judge("acme", "--endpoint", "http://x:1/v1", "--model", "m2")
    config = JudgeConfig.objects.get(project=acme)
    assert (config.model, config.api_key, config.criteria) == ("m2", KEY, {"tone": "Polite?"})
    configure_judge("acme", "--endpoint", "http://x:1/v1", "--model", "m2", "--no-api-key")
    assert JudgeConfig.objects.get(project=acme).api_key == ""


def test_it_reports_every_invalid_field(acme):
    with pytest.raises(CommandError) as exc:
        configure_judge(
            "acme", "--endpoint", "localhost:11434", "--model", "m", "--timeout-seconds", "301",
            "--criterion", "exact_match=Is it exact?",
        )  # fmt: skip
    message = str(exc.value)
    assert "endpoint: must start with http:// or https://" in message
    assert "timeout_seconds: must be from 1 to 300; got 301" in message
    assert "criteria.exact_match: 'exact_match' is the id of a built-in scorer" in message
    assert not JudgeConfig.objects.exists()


def test_it_refuses_a_criterion_without_an_equals_sign(acme):
    with pytest.raises(CommandError, match="ID=QUESTION"):
        configure_judge("acme", "--endpoint", "http://x:1/v1", "--model", "m", "--criterion", "tone")


def test_it_names_an_unknown_project():
    with pytest.raises(CommandError, match="No project with slug 'nope'"):
        configure_judge("nope", "--endpoint", "http://x:1/v1", "--model", "m")


def test_it_does_not_echo_a_key_given_where_a_variable_name_belongs(acme):
    with pytest.raises(CommandError) as exc:
        configure_judge("acme", "--endpoint", "http://x:1/v1", "--model", "m", "--api-key-env", KEY)
    assert "NAME of an environment variable" in str(exc.value)
    assert KEY not in str(exc.value)
