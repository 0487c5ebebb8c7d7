"""The per-process bound on concurrent OTLP exports: past it, 503 with ``Retry-After``.

Exporters send in bursts, retry by themselves and honour ``Retry-After``; pages and
the CI API do not. So a web process works on at most ``EVALSITE_OTLP_MAX_CONCURRENT``
exports at a time (default 2, which leaves threads of a 4-thread gunicorn worker for
everything else) and answers the next one at once with 503 instead of queueing it
behind the others. The other overload, a database that cannot take the write in time,
is reported by ``ingestion`` the same way.
"""

import contextlib
import threading

from django.conf import settings

from datasets.otlp.errors import Overloaded

RETRY_AFTER_SECONDS = 1

_lock = threading.Lock()
_busy = 0


def max_concurrent():
    return settings.EVALSITE_OTLP_MAX_CONCURRENT


@contextlib.contextmanager
def export_slot():
    """Hold one of the process's export slots; raises ``Overloaded`` when none is free."""
    global _busy
    with _lock:
        if _busy >= max_concurrent():
            raise Overloaded(
                f"This server is already taking {_busy} exports; retry (EVALSITE_OTLP_MAX_CONCURRENT).",
                retry_after=RETRY_AFTER_SECONDS,
            )
        _busy += 1
    try:
        yield
    finally:
        with _lock:
            _busy -= 1
