"""Log lines: plain text by default, one JSON object per line with ``EVALSITE_LOG_FORMAT=json``.

In JSON, every record carries ``time``, ``level``, ``logger`` and ``message``, plus the
fields a caller passed in ``extra={"fields": {...}}``. Two loggers write one line per
unit of work: ``evalsite.request`` per HTTP request (``RequestLogMiddleware``: method,
path, status, duration, the project key's prefix when an API key was used) and
``evalsite.task`` per Celery task (name, id, state, duration; connected in
``evalsite.celery``). A line never carries a request body, a key or a judge's api_key.
"""

import logging
import time
from datetime import UTC, datetime

import orjson

request_logger = logging.getLogger("evalsite.request")
task_logger = logging.getLogger("evalsite.task")


class JsonFormatter(logging.Formatter):
    def format(self, record):
        line = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            **getattr(record, "fields", {}),
        }
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return orjson.dumps(line, default=str).decode()


class RequestLogMiddleware:
    """One ``evalsite.request`` line per request, once the answer is ready."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        started = time.monotonic()
        response = self.get_response(request)
        fields = {
            "method": request.method,
            "path": request.path,
            "status": response.status_code,
            "duration_ms": round((time.monotonic() - started) * 1000, 1),
        }
        key = getattr(getattr(request, "auth", None), "prefix", None)
        if key:
            fields["api_key"] = key
        # Only a user the request already loaded: reading one here would query the
        # database after the answer (and fail it when the database is away).
        user = getattr(request, "_cached_user", None)
        if user is not None and user.is_authenticated:
            fields["user"] = user.get_username()
        request_logger.info("%s %s %s", request.method, request.path, response.status_code, extra={"fields": fields})
        return response


_STARTED = {}


def task_started(task_id=None, **kwargs):
    _STARTED[task_id] = time.monotonic()


def task_finished(task_id=None, task=None, state=None, **kwargs):
    started = _STARTED.pop(task_id, None)
    fields = {"task": getattr(task, "name", None), "task_id": task_id, "state": state}
    if started is not None:
        fields["duration_ms"] = round((time.monotonic() - started) * 1000, 1)
    # A sweep every few seconds that went well is not news: DEBUG, not INFO.
    level = logging.DEBUG if getattr(task, "routine", False) and state == "SUCCESS" else logging.INFO
    task_logger.log(level, "%s %s", fields["task"], state, extra={"fields": fields})
