"""Read settings from the environment.

Every helper raises ``ImproperlyConfigured`` naming the variable when its value is
unusable, so a typo in a deployment fails at start-up with the variable's name instead
of surfacing later as a confusing error.
"""

import os
import secrets
from pathlib import Path
from urllib.parse import parse_qsl, unquote, urlsplit

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name, default=None):
    return os.environ.get(name, default)


def env_bool(name, default=False):
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name} must be one of 1/0, true/false, yes/no, on/off; got {raw!r}.")


def env_int(name, default, *, minimum=None, maximum=None):
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    text = raw.strip()
    # int() also reads "١٢", "1_000" and "+5": a setting is written in ASCII digits.
    if not (text.isascii() and text.removeprefix("-").isdigit()):
        raise ImproperlyConfigured(f"{name} must be an integer in ASCII digits; got {raw!r}.")
    value = int(text)
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name} must be at least {minimum}; got {value}.")
    if maximum is not None and value > maximum:
        raise ImproperlyConfigured(f"{name} must be at most {maximum}; got {value}.")
    return value


def env_choice(name, default, choices):
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    value = raw.strip().lower()
    if value not in choices:
        raise ImproperlyConfigured(f"{name} must be one of {', '.join(choices)}; got {raw!r}.")
    return value


def env_list(name, default=()):
    raw = os.environ.get(name)
    if raw is None:
        return list(default)
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_url(name, default=None):
    """An absolute http(s) URL without a trailing slash (``https://evals.example.com``), or ``default``."""
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    value = raw.strip().rstrip("/")
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ImproperlyConfigured(f"{name} must be an absolute http:// or https:// URL; got {raw!r}.")
    if parts.query or parts.fragment:
        raise ImproperlyConfigured(f"{name} must not have a query or a fragment; got {raw!r}.")
    return value


def database_from_url(name, url, *, sqlite_default):
    """A ``DATABASES['default']`` dict from a URL, or the embedded SQLite file.

    Accepted: ``postgres://``/``postgresql://`` URLs (user, password, host, port,
    database, query options such as ``sslmode``) and ``sqlite:///absolute/path``.
    """
    if not url:
        return _sqlite(sqlite_default)
    parts = urlsplit(url)
    if parts.scheme == "sqlite":
        path = unquote(parts.path)
        if not path or path == "/":
            raise ImproperlyConfigured(f"{name} must name a file: sqlite:////absolute/path.db")
        return _sqlite(Path(path))
    if parts.scheme not in ("postgres", "postgresql", "pgsql"):
        raise ImproperlyConfigured(
            f"{name} must start with postgres://, postgresql:// or sqlite://; got {parts.scheme!r}."
        )
    database = unquote(parts.path.lstrip("/"))
    if not database:
        raise ImproperlyConfigured(f"{name} must name a database, e.g. postgres://user@host:5432/evalsite")
    try:
        port = parts.port
    except ValueError:
        raise ImproperlyConfigured(f"{name} has an invalid port.") from None
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": database,
        "USER": unquote(parts.username or ""),
        "PASSWORD": unquote(parts.password or ""),
        "HOST": parts.hostname or "",
        "PORT": str(port or ""),
        # Persistent connections: one TCP + auth handshake per process, not per request.
        "CONN_MAX_AGE": 60,
        "CONN_HEALTH_CHECKS": True,
        "OPTIONS": dict(parse_qsl(parts.query)),
    }


def _sqlite(path):
    return {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": Path(path),
        "OPTIONS": {
            # IMMEDIATE takes the write lock when a transaction starts, so two writers
            # queue on the busy timeout instead of failing with "database is locked"
            # when one upgrades a read lock mid-transaction.
            "transaction_mode": "IMMEDIATE",
            "timeout": 30,
            # WAL lets the web process read while the worker writes.
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        },
        "TEST": {"NAME": Path(path).with_name("test-" + Path(path).name)},
    }


def secret_key(name, *, required, keep_in):
    """The secret key from the environment, or one generated once and kept on disk.

    In production the variable is required: a key generated on one machine would
    differ on the next and log every user out.
    """
    value = os.environ.get(name)
    if value:
        if required and len(value) < 50:
            raise ImproperlyConfigured(f"{name} must be at least 50 characters long in production.")
        return value
    if required:
        raise ImproperlyConfigured(f"{name} must be set in production (EVALSITE_PRODUCTION=1).")
    keep_in.parent.mkdir(parents=True, exist_ok=True)
    if not keep_in.exists():
        keep_in.write_text(secrets.token_urlsafe(64))
        keep_in.chmod(0o600)
    return keep_in.read_text().strip()
