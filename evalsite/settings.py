"""evalsite settings, read from the environment.

Embedded default (nothing to set): SQLite under ``var/`` and a Celery broker on the
filesystem under ``var/broker``. With ``DATABASE_URL`` and ``REDIS_URL`` the same code
runs on PostgreSQL and Redis. ``EVALSITE_PRODUCTION=1`` requires a real ``SECRET_KEY``
and turns on the HTTPS and cookie settings that ``manage.py check --deploy`` asks for.
Django's debug mode is off unless ``EVALSITE_DEBUG=1`` turns it on (the demo does not
need it: static files and local host names follow ``EVALSITE_PRODUCTION`` instead).
"""

from datetime import timedelta
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from evalsite.env import database_from_url, env_bool, env_choice, env_int, env_list, env_str, env_url, secret_key

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env_str("EVALSITE_VAR_DIR") or BASE_DIR / "var")

PRODUCTION = env_bool("EVALSITE_PRODUCTION", False)
# Our own variable, off by default: a generic DEBUG=1 left in an environment by another
# tool must not show tracebacks and settings to visitors.
DEBUG = env_bool("EVALSITE_DEBUG", False)
SECRET_KEY = secret_key("SECRET_KEY", required=PRODUCTION, keep_in=VAR_DIR / "secret_key")
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", [] if PRODUCTION else ["localhost", "127.0.0.1", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "evalsite",
    "datasets",
    "scoring",
    "gating",
    "online",
    "monitors",
    "lifecycle",
    "harvest",
    "web",
    "axes",
]

MIDDLEWARE = [
    "evalsite.logs.RequestLogMiddleware",
    "evalsite.middleware.BodySizeLimitMiddleware",
    "evalsite.middleware.NulCharacterMiddleware",
    "web.api.query_rules.UnknownQueryParameterMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last, so it is the first to see what a view raised: a lost database is a 503.
    "web.system.DatabaseOutageMiddleware",
    # Answers a locked-out login (django-axes) with its lockout page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "web.urls"
WSGI_APPLICATION = "evalsite.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {
    "default": database_from_url("DATABASE_URL", env_str("DATABASE_URL"), sqlite_default=VAR_DIR / "evalsite.sqlite3")
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
# django-axes first: it counts failed logins (pages and admin) and refuses a locked-out
# one before the password is checked.
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "django.contrib.auth.backends.ModelBackend"]
# Wrong passwords for one username from one address before that pair is locked out
# (429), and for how long. Per pair, so an attacker cannot lock a user out from
# elsewhere, and a user behind a shared address is not locked out by another's typos.
AXES_FAILURE_LIMIT = env_int("EVALSITE_LOGIN_FAILURE_LIMIT", 5, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("EVALSITE_LOGIN_COOLOFF_MINUTES", 15, minimum=1))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
# Reverse proxies in front of the site whose X-Forwarded-For entries name the client
# (evalsite.addresses); 0 trusts none and counts per socket address.
EVALSITE_TRUSTED_PROXIES = env_int("EVALSITE_TRUSTED_PROXIES", 0, minimum=0, maximum=10)
AXES_CLIENT_IP_CALLABLE = "evalsite.addresses.client_address"
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"
        if PRODUCTION
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}
# Serve static files straight from the apps in development; production runs collectstatic.
WHITENOISE_USE_FINDERS = not PRODUCTION

# Request bodies: one limit for every endpoint, answered with 413 by BodySizeLimitMiddleware.
EVALSITE_MAX_BODY_BYTES = env_int("EVALSITE_MAX_BODY_BYTES", 16 * 1024 * 1024, minimum=1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = EVALSITE_MAX_BODY_BYTES
# Most runs one ingestion request may carry.
EVALSITE_MAX_BATCH = env_int("EVALSITE_MAX_BATCH", 1000, minimum=1)
# Gates over more active cases than this answer 202 and are evaluated by a worker.
EVALSITE_GATE_SYNC_MAX_CASES = env_int("EVALSITE_GATE_SYNC_MAX_CASES", 500, minimum=0)
# Cases the gate's answer carries (failures first), and in a page of GET gate-runs/{id}/cases:
# a 10,000-case gate listed whole was a 28 MB answer; the rest is read by its cursor.
EVALSITE_GATE_ANSWER_CASES = env_int("EVALSITE_GATE_ANSWER_CASES", 100, minimum=1, maximum=500)
# How long a synchronous request may work (scoring with a judge plans within it).
EVALSITE_REQUEST_TIMEOUT_SECONDS = env_int("EVALSITE_REQUEST_TIMEOUT_SECONDS", 30, minimum=1)
# Allocations between two young-generation collections of Python's cycle collector (its
# default is 700). A gate or a pass builds hundreds of thousands of objects that live until
# it ends; at 700 the collector scanned them again and again, a third of a 10,000-case
# gate's time. Set by the app at start-up (evalsite.apps); cycles wait a little longer.
EVALSITE_GC_THRESHOLD = env_int("EVALSITE_GC_THRESHOLD", 20_000, minimum=100)
# Most runs one worker pass may judge: each is a paid model call per criterion (docs/judge.md).
EVALSITE_JUDGE_PASS_MAX_RUNS = env_int("EVALSITE_JUDGE_PASS_MAX_RUNS", 10_000, minimum=1)
# Limits of a project archive import (lifecycle.archive_members): bytes one member and
# all members may inflate to, and how many times its compressed size a member may grow.
EVALSITE_ARCHIVE_MAX_MEMBER_BYTES = env_int("EVALSITE_ARCHIVE_MAX_MEMBER_BYTES", 512 * 1024 * 1024, minimum=1024)
EVALSITE_ARCHIVE_MAX_TOTAL_BYTES = env_int("EVALSITE_ARCHIVE_MAX_TOTAL_BYTES", 1024 * 1024 * 1024, minimum=1024)
EVALSITE_ARCHIVE_MAX_RATIO = env_int("EVALSITE_ARCHIVE_MAX_RATIO", 200, minimum=2)
# Project exports written by workers (lifecycle.exports): the directory of the files, the
# hours a finished file is kept before the sweep removes it, and how many times a job
# whose worker died is sent again before it is failed.
EVALSITE_EXPORT_DIR = Path(env_str("EVALSITE_EXPORT_DIR") or VAR_DIR / "exports")
EVALSITE_EXPORT_RETENTION_HOURS = env_int("EVALSITE_EXPORT_RETENTION_HOURS", 72, minimum=1)
EVALSITE_EXPORT_MAX_ATTEMPTS = env_int("EVALSITE_EXPORT_MAX_ATTEMPTS", 3, minimum=1, maximum=20)
# Whether the server's own calls (the judge) may go to loopback and private addresses
# (checks.outbound): on by default for the embedded setup, where the judge often runs on
# the same host; off by default in production (docs/deploy.md). Link-local and cloud
# metadata addresses are refused either way.
EVALSITE_OUTBOUND_ALLOW_PRIVATE = env_bool("EVALSITE_OUTBOUND_ALLOW_PRIVATE", not PRODUCTION)
# Where people reach this site (https://evals.example.com): the links in gate answers
# (the gate run page, each case's run) start with it; unset, they follow the request.
EVALSITE_PUBLIC_URL = env_url("EVALSITE_PUBLIC_URL")
# OTLP exports one web process takes at once; the next gets 503 with Retry-After.
EVALSITE_OTLP_MAX_CONCURRENT = env_int("EVALSITE_OTLP_MAX_CONCURRENT", 2, minimum=1)

# End users' feedback each API key may send per minute from one client address (429 over it).
EVALSITE_FEEDBACK_PER_MINUTE = env_int("EVALSITE_FEEDBACK_PER_MINUTE", 60, minimum=1)
# Days feedback on a run that has not arrived is kept waiting for it (then dropped by the hourly sweep).
EVALSITE_FEEDBACK_PENDING_DAYS = env_int("EVALSITE_FEEDBACK_PENDING_DAYS", 7, minimum=1)

# The bearer token /metrics requires; unset, /metrics answers whoever reaches it (keep
# it on an internal address, docs/deploy.md).
EVALSITE_METRICS_TOKEN = env_str("EVALSITE_METRICS_TOKEN", "")

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["evalsite.auth.ApiKeyAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["evalsite.auth.HasProjectKey"],
    "DEFAULT_PARSER_CLASSES": ["web.api.rest.FastJSONParser"],
    "DEFAULT_RENDERER_CLASSES": ["web.api.rest.FastJSONRenderer", "rest_framework.renderers.BrowsableAPIRenderer"],
    "DEFAULT_SCHEMA_CLASS": "web.api.openapi.ScopedAutoSchema",
    "EXCEPTION_HANDLER": "evalsite.errors.problem_exception_handler",
    "DEFAULT_PAGINATION_CLASS": "web.api.rest.NewestFirstCursorPagination",
    "PAGE_SIZE": 50,
}
if not DEBUG:
    REST_FRAMEWORK["DEFAULT_RENDERER_CLASSES"] = ["web.api.rest.FastJSONRenderer"]

SPECTACULAR_SETTINGS = {
    "TITLE": "evalsite API",
    "DESCRIPTION": "Store agent runs, curate golden cases, score runs offline and gate CI on regressions.",
    "VERSION": "1.0.0",
    "OAS_VERSION": "3.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.AllowAny"],
    "SERVE_AUTHENTICATION": [],
    "COMPONENT_SPLIT_REQUEST": True,
    "ENUM_NAME_OVERRIDES": {
        "RunStatusEnum": "datasets.models.RunStatus",
        "IngestStatusEnum": ["created", "unchanged"],
        "CaseStatusEnum": "datasets.models.CaseStatus",
        "PairwiseVerdictEnum": "scoring.models.PairwiseVerdict",
    },
    "SCHEMA_PATH_PREFIX": r"/v1/api",
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "web.api.openapi.bad_request_documented",
        "web.api.openapi.named_requests_added",
        "web.otlp.schema.export_body_required",
    ],
    # Swagger UI and Redoc served from this site, not a CDN: the docs work offline.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

# Celery. The broker is Redis when REDIS_URL is set, otherwise kombu's filesystem
# transport under var/broker, which needs no server for local use.
REDIS_URL = env_str("REDIS_URL")
BROKER_DIR = VAR_DIR / "broker"
if REDIS_URL:
    CELERY_BROKER_URL = REDIS_URL
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        # Above the longest task (one chunk of a pass), or Redis redelivers a task
        # that is still running and it runs twice (celery/celery#5935).
        "visibility_timeout": env_int("EVALSITE_VISIBILITY_TIMEOUT_SECONDS", 3600, minimum=1),
    }
else:
    CELERY_BROKER_URL = "filesystem://localhost/"
    # kombu's filesystem transport with atomic writes, and a reader that leaves a
    # half-written message file for later instead of dying on it (evalsite/filesystem_broker.py).
    CELERY_BROKER_TRANSPORT = "evalsite.filesystem_broker:Transport"
    for folder in ("queue", "control"):
        (BROKER_DIR / folder).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(BROKER_DIR / "queue"),
        "data_folder_out": str(BROKER_DIR / "queue"),
        "control_folder": str(BROKER_DIR / "control"),
        "store_processed": False,
        # The folder is polled; the default (1 s) would make every task of a pass wait
        # up to a second to be picked up.
        "polling_interval": 0.1,
    }
# The queue every task goes to and every worker reads: two evalsites (staging and
# production) may share one Redis when each has its own.
CELERY_TASK_DEFAULT_QUEUE = env_str("EVALSITE_QUEUE", "celery")
# Results live in the database (passes, scores); Celery's result store is not used.
CELERY_TASK_IGNORE_RESULT = True
# JSON only: a task argument is an id, never a pickled object.
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
# Ack after the task finished, and requeue when the worker dies mid-task: tasks are
# idempotent (compare-and-set claims, unique constraints), so a re-run is safe.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
# One message at a time per process, so a long chunk does not hold others hostage.
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Runs per chunk of a scoring pass (one task each). 1000 runs with the 16 built-in
# scorers take well under a second, far below the visibility timeout and the lease.
EVALSITE_PASS_CHUNK_RUNS = env_int("EVALSITE_PASS_CHUNK_RUNS", 1000, minimum=1, maximum=100_000)
# A claimed chunk (or gate run) is leased to its worker, renewed by a thread every third
# of the lease while it works; a chunk whose lease ran out (its worker died) is sent
# again by the sweeper every worker runs every quarter of the lease, on any broker (the
# filesystem one never redelivers). 20 s: a dead worker's chunk moves on within ~30 s.
EVALSITE_CHUNK_LEASE_SECONDS = env_int("EVALSITE_CHUNK_LEASE_SECONDS", 20, minimum=1)
# Seconds between two looks of the online rules at the runs that arrived: the lag from a
# run's arrival to its online scores is about this plus the pass.
EVALSITE_ONLINE_TICK_SECONDS = env_int("EVALSITE_ONLINE_TICK_SECONDS", 5, minimum=1, maximum=300)
# Seconds between two heartbeats of a worker (/healthz lists workers seen in 5 minutes).
# Seconds between two looks of the failure groups at the runs scored since (harvest.tasks).
EVALSITE_HARVEST_TICK_SECONDS = env_int("EVALSITE_HARVEST_TICK_SECONDS", 30, minimum=1, maximum=3600)
EVALSITE_HEARTBEAT_SECONDS = env_int("EVALSITE_HEARTBEAT_SECONDS", 30, minimum=1, maximum=240)
# Seconds between two retention sweeps sent by each worker (lifecycle.retention);
# each sweep deletes at most a bounded number of expired runs per project.
EVALSITE_RETENTION_SWEEP_SECONDS = env_int("EVALSITE_RETENTION_SWEEP_SECONDS", 3600, minimum=1)
# Seconds between two evaluations of every monitor (docs/monitors.md), sent by Celery
# beat, a process of its own (Procfile ``beat``, ``manage.py serve`` starts one): a
# schedule kept by one process sends each tick once, however many workers run.
EVALSITE_MONITOR_EVALUATE_SECONDS = env_int("EVALSITE_MONITOR_EVALUATE_SECONDS", 60, minimum=1, maximum=3600)
# A tick no worker took before the next one is dropped (expires): after an outage the
# workers do not work through a backlog of evaluations of windows long gone.
CELERY_BEAT_SCHEDULE = {
    "monitors-evaluate": {
        "task": "monitors.evaluate_all",
        "schedule": float(EVALSITE_MONITOR_EVALUATE_SECONDS),
        "options": {"expires": float(EVALSITE_MONITOR_EVALUATE_SECONDS)},
    },
}
# Seconds before the first retry of a failed webhook delivery; each next one waits twice
# as long (2, 4, 8, 16, 32 s: six attempts over about a minute).
EVALSITE_WEBHOOK_BACKOFF_SECONDS = env_int("EVALSITE_WEBHOOK_BACKOFF_SECONDS", 2, minimum=1, maximum=600)
# E-mail for monitors' alerts (docs/monitors.md), through Django's SMTP backend. Off
# until EMAIL_HOST is set: the pages say so and the API refuses e-mail recipients.
EMAIL_HOST = env_str("EMAIL_HOST", "").strip()
EMAIL_PORT = env_int("EMAIL_PORT", 25, minimum=1, maximum=65535)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD", "")
# STARTTLS on the plain port (587), or TLS from the first byte (465); not both.
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
EMAIL_USE_SSL = env_bool("EMAIL_USE_SSL", False)
if EMAIL_USE_TLS and EMAIL_USE_SSL:
    raise ImproperlyConfigured("EMAIL_USE_TLS and EMAIL_USE_SSL are exclusive: set one of them.")
# Seconds an SMTP conversation may hang before the attempt counts as failed (and is retried).
EMAIL_TIMEOUT = env_int("EMAIL_TIMEOUT", 10, minimum=1, maximum=300)
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "evalsite@localhost")
# Beat's record of when each entry last ran, under var/ like the filesystem broker.
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")
# A broker that is briefly down at start-up is waited for, not fatal.
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Keep Django's LOGGING; Celery would otherwise replace the root logger's handlers.
CELERY_WORKER_HIJACK_ROOT_LOGGER = False

# plain (default) or json: one JSON object per line, one line per request and per task.
LOG_FORMAT = env_choice("EVALSITE_LOG_FORMAT", "plain", ("plain", "json"))
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"},
        "json": {"()": "evalsite.logs.JsonFormatter"},
    },
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": LOG_FORMAT}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    "loggers": {
        # Django's own console handler would print every line a second time.
        "django": {"handlers": ["console"], "level": "INFO", "propagate": False},
        "django.db.backends": {"level": "WARNING"},
        # Lockouts and failed logins are warnings; its start-up banner is not worth a line.
        "axes": {"level": "WARNING"},
        # Celery's own line per task received and succeeded: evalsite.task says it once
        # (and keeps the sweeps every few seconds at DEBUG); failures are still errors.
        "celery.worker.strategy": {"level": "WARNING"},
        "celery.app.trace": {"level": "WARNING"},
        # The judge's HTTP client logs every request; the judge logs its own outcomes.
        "httpx": {"level": "WARNING"},
        "httpcore": {"level": "WARNING"},
    },
}

if PRODUCTION:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
    # Scrapers and load balancers reach a web process directly, over plain HTTP on an
    # internal address: answered, not redirected to an https:// they cannot follow.
    SECURE_REDIRECT_EXEMPT = [r"^metrics$", r"^healthz$"]
    SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31536000, minimum=0)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_CONTENT_TYPE_NOSNIFF = True
    X_FRAME_OPTIONS = "DENY"
