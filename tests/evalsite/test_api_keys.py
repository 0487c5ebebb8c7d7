import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from evalsite.keys import secret_hash
from evalsite.models import ApiKey, Project
from evalsite.projects import api_key_create, api_key_revoke
from tests.live import child_env

ROOT = Path(__file__).resolve().parents[2]


def test_it_stores_only_a_prefix_and_a_hash_of_the_secret(actors):
    key, full_key = api_key_create(project=actors.acme, name="laptop")
    _, prefix, secret = full_key.split("_", 2)
    stored = ApiKey.objects.get(pk=key.pk)
    assert stored.prefix == prefix
    assert stored.secret_hash == secret_hash(secret)
    assert secret not in {str(v) for v in stored.__dict__.values()}


def test_it_authenticates_a_bearer_key_and_records_when_it_was_used(actors):
    key = ApiKey.objects.get(project=actors.acme, name="ci")
    assert key.last_used_at is None
    response = actors.api().get("/v1/api/traces")
    assert response.status_code == 200
    key.refresh_from_db()
    assert key.last_used_at is not None and (timezone.now() - key.last_used_at).total_seconds() < 60


@pytest.mark.parametrize(
    "header",
    ["", "Bearer", "Basic dXNlcjpwYXNz", "Bearer not-a-key", "Bearer esk_aaaaaaaaaa_wrongsecret", "Token esk_x_y"],
)
def test_it_answers_401_with_a_bearer_challenge_to_a_missing_or_bad_key(actors, header):
    client = actors.api(key="")
    if header:
        client.credentials(HTTP_AUTHORIZATION=header)
    response = client.get("/v1/api/traces")
    assert response.status_code == 401
    assert response["Content-Type"] == "application/problem+json"
    assert response["WWW-Authenticate"].startswith("Bearer")


def test_it_refuses_a_revoked_key(actors):
    key, full_key = api_key_create(project=actors.acme, name="temp")
    assert actors.api(full_key).get("/v1/api/traces").status_code == 200
    api_key_revoke(key=key)
    response = actors.api(full_key).get("/v1/api/traces")
    assert response.status_code == 401
    assert "revoked" in response.json()["detail"]


def test_it_refuses_a_right_prefix_with_a_wrong_secret(actors):
    prefix = actors.acme_key.split("_")[1]
    response = actors.api(f"esk_{prefix}_{'A' * 43}").get("/v1/api/traces")
    assert response.status_code == 401


def _last_line(text):
    return text.strip().splitlines()[-1]


def test_create_project_prints_a_working_key_alone_on_its_last_line(db, capsys):
    call_command("create_project", "reservo", "--name", "Reservo", "--quota-per-minute", "600")
    key = _last_line(capsys.readouterr().out)
    project = Project.objects.get(slug="reservo")
    assert (project.name, project.quota_per_minute) == ("Reservo", 600)
    assert key.startswith("esk_") and " " not in key
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    assert client.get("/v1/api/traces").status_code == 200


def test_create_api_key_prints_a_new_key_for_the_project(actors, capsys):
    call_command("create_api_key", "acme", "--name", "ci-2")
    key = _last_line(capsys.readouterr().out)
    assert ApiKey.objects.filter(project=actors.acme, name="ci-2").count() == 1
    assert actors.api(key).get("/v1/api/traces").status_code == 200


def test_the_commands_fail_clearly_on_a_bad_slug(db):
    result = subprocess.run(
        [sys.executable, "manage.py", "create_api_key", "no-such-project"],
        cwd=ROOT,
        env=child_env(),
        capture_output=True,
        text=True,
    )
    assert result.returncode != 0
    assert "No project with slug 'no-such-project'" in result.stderr


def test_create_project_can_name_its_admin_who_then_sees_it(actors, capsys):
    call_command("create_project", "pedalpal", "--admin", "alice")
    project = Project.objects.get(slug="pedalpal")
    assert project.memberships.get(user=actors.alice).role == "admin"
    client = Client()
    client.force_login(actors.alice)
    assert client.get("/p/pedalpal/settings/").status_code == 200


def test_create_project_with_an_unknown_admin_creates_nothing(db):
    with pytest.raises(CommandError, match="nobody"):
        call_command("create_project", "pedalpal", "--admin", "nobody")
    assert not Project.objects.filter(slug="pedalpal").exists()


@pytest.mark.parametrize("quota", ["\u0666\u0660\u0660", "1_000"])
def test_create_project_refuses_a_quota_not_written_in_ascii_digits(db, quota):
    with pytest.raises(CommandError, match="ASCII digits"):
        call_command("create_project", "pedalpal", "--quota-per-minute", quota)
    assert not Project.objects.filter(slug="pedalpal").exists()
