"""The writer of a chunk's batches (``scoring.passes.services``): one batch in flight on the process's writer thread."""

import os
from concurrent.futures import ThreadPoolExecutor

from django.db import close_old_connections, connections


class BatchWriter:
    """Runs the write of one batch at a time, on the process's writer thread when ``pipelined``.

    Loading and scoring are Python work; writing is mostly the database's. With one
    batch in flight on the writer thread's own connection, the database writes batch
    n while this process scores batch n + 1. An error of the write (including
    ``ClaimLost``) is raised by the next ``submit`` or by ``wait``. Without
    ``pipelined`` each write runs at once, on the caller's connection.
    """

    def __init__(self, *, pipelined):
        self._executor = _writer_thread() if pipelined else None
        self._pending = None

    def submit(self, write, *args, **kwargs):
        self.wait()
        if self._executor is None:
            write(*args, **kwargs)
        else:
            self._pending = self._executor.submit(_with_fresh_connection, write, *args, **kwargs)

    def wait(self):
        pending, self._pending = self._pending, None
        if pending is not None:
            pending.result()

    def close(self):
        """Let a batch still in flight finish (its error, if any, is not raised again)."""
        pending, self._pending = self._pending, None
        if pending is not None:
            pending.exception()


_WRITER = {"pid": None, "executor": None}


def _writer_thread():
    """The process's one writer thread (and so one extra database connection), made on first use.

    Made again in a forked child: threads do not survive a fork.
    """
    if _WRITER["pid"] != os.getpid():
        _WRITER["executor"] = ThreadPoolExecutor(max_workers=1, thread_name_prefix="scoring-writer")
        _WRITER["pid"] = os.getpid()
    return _WRITER["executor"]


def writer_stop():
    """Stop this process's writer thread, closing its database connection; the next pass makes a new one."""
    executor = _WRITER["executor"] if _WRITER["pid"] == os.getpid() else None
    _WRITER.update(pid=None, executor=None)
    if executor is not None:
        executor.submit(connections.close_all).result()
        executor.shutdown()


def _with_fresh_connection(write, *args, **kwargs):
    # Between two batches the database may have closed the connection, or it may have
    # outlived CONN_MAX_AGE: start each batch as Django starts each request.
    close_old_connections()
    return write(*args, **kwargs)
