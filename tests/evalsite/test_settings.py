import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from evalsite.env import database_from_url, env_bool, env_int, secret_key

ROOT = Path(__file__).resolve().parents[2]


def test_it_reads_booleans_and_names_the_variable_on_a_bad_value(monkeypatch):
    monkeypatch.setenv("DEBUG", "yes")
    assert env_bool("DEBUG") is True
    monkeypatch.setenv("DEBUG", "maybe")
    with pytest.raises(ImproperlyConfigured, match="DEBUG"):
        env_bool("DEBUG")


def test_it_refuses_an_integer_out_of_range_naming_the_variable(monkeypatch):
    monkeypatch.setenv("EVALSITE_MAX_BATCH", "0")
    with pytest.raises(ImproperlyConfigured, match="EVALSITE_MAX_BATCH must be at least 1"):
        env_int("EVALSITE_MAX_BATCH", 1000, minimum=1)
    for text in ("lots", "١٢", "1_000", "2.5"):
        monkeypatch.setenv("EVALSITE_MAX_BATCH", text)
        with pytest.raises(ImproperlyConfigured, match="EVALSITE_MAX_BATCH must be an integer in ASCII digits"):
            env_int("EVALSITE_MAX_BATCH", 1000, minimum=1)
    monkeypatch.setenv("EVALSITE_MAX_BATCH", " 250 ")
    assert env_int("EVALSITE_MAX_BATCH", 1000, minimum=1) == 250


def test_it_parses_a_postgresql_url():
    db = database_from_url(
        "DATABASE_URL", "postgres://ana:s%40cret@db.example:6543/evals?sslmode=require", sqlite_default=None
    )
    assert db["ENGINE"] == "django.db.backends.postgresql"
    assert (db["USER"], db["PASSWORD"], db["HOST"], db["PORT"], db["NAME"]) == (
        "ana",
        "s@cret",
        "db.example",
        "6543",
        "evals",
    )
    assert db["OPTIONS"] == {"sslmode": "require"}


def test_it_uses_embedded_sqlite_in_wal_mode_with_immediate_transactions_by_default(tmp_path):
    db = database_from_url("DATABASE_URL", None, sqlite_default=tmp_path / "e.sqlite3")
    assert db["ENGINE"] == "django.db.backends.sqlite3"
    assert db["OPTIONS"]["transaction_mode"] == "IMMEDIATE"
    assert "journal_mode=WAL" in db["OPTIONS"]["init_command"]
    assert db["OPTIONS"]["timeout"] > 0


@pytest.mark.parametrize("url", ["mysql://x@y/z", "postgres://host-without-db", "sqlite://"])
def test_it_refuses_a_database_url_it_cannot_use(url):
    with pytest.raises(ImproperlyConfigured, match="DATABASE_URL"):
        database_from_url("DATABASE_URL", url, sqlite_default=None)


def test_it_keeps_a_generated_secret_key_across_starts(tmp_path, monkeypatch):
    monkeypatch.delenv("SECRET_KEY", raising=False)
    first = secret_key("SECRET_KEY", required=False, keep_in=tmp_path / "secret_key")
    assert len(first) >= 50
    assert secret_key("SECRET_KEY", required=False, keep_in=tmp_path / "secret_key") == first


def test_it_requires_a_secret_key_in_production(tmp_path, monkeypatch):
    monkeypatch.delenv("SECRET_KEY", raising=False)
    with pytest.raises(ImproperlyConfigured, match="SECRET_KEY must be set in production"):
        secret_key("SECRET_KEY", required=True, keep_in=tmp_path / "secret_key")


def _manage(*args, **env):
    full_env = {k: v for k, v in os.environ.items() if k not in ("DEBUG", "SECRET_KEY", "ALLOWED_HOSTS")}
    full_env.update(env)
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=full_env, capture_output=True, text=True)


def test_it_passes_the_deployment_checklist_in_production_mode():
    result = _manage(
        "check", "--deploy", "--fail-level", "WARNING",
        EVALSITE_PRODUCTION="1", SECRET_KEY="x" * 30 + "-production-secret-for-the-check", ALLOWED_HOSTS="evals.example.com",
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout


def test_it_refuses_to_start_in_production_without_a_secret_key():
    result = _manage("check", EVALSITE_PRODUCTION="1", ALLOWED_HOSTS="evals.example.com")
    assert result.returncode != 0
    assert "SECRET_KEY must be set in production" in result.stderr


def test_every_process_collects_cycles_at_the_configured_threshold():
    result = _manage("shell", "-c", "import gc; print(gc.get_threshold()[0])", EVALSITE_GC_THRESHOLD="12345")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[-1] == "12345"
    refused = _manage("check", EVALSITE_GC_THRESHOLD="3")
    assert refused.returncode != 0 and "EVALSITE_GC_THRESHOLD must be at least 100" in refused.stderr
