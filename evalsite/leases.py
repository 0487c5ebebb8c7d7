"""Leases kept alive from a thread while their holder works.

A holder (a worker scoring a pass chunk, or evaluating a gate) takes a row by
compare-and-set with a ``lease_until`` in the future. While it works, ``renewed_while``
calls ``renew()`` every ``every`` seconds from a thread of its own, on that thread's own
database connection, so a step of any length (a slow judge call) keeps the lease, and a
process killed with SIGKILL stops renewing: its lease runs out and a sweeper hands the
row to another worker. ``renew()`` returns falsy once the claim is lost, which ends the
renewals; a renewal that fails on a database error is tried again at the next tick.
"""

import contextlib
import logging
import threading

from django.db import InterfaceError, OperationalError, connections

logger = logging.getLogger(__name__)


@contextlib.contextmanager
def renewed_while(renew, *, every, name):
    """Call ``renew()`` every ``every`` seconds from a thread until the block ends or it returns falsy."""
    stop = threading.Event()

    def keep():
        try:
            while not stop.wait(every):
                try:
                    if not renew():
                        return
                except (OperationalError, InterfaceError) as exc:
                    logger.warning("%s: lease renewal failed, trying again: %s", name, exc)
                    connections.close_all()  # this thread's; the next tick reconnects
        finally:
            connections.close_all()

    thread = threading.Thread(target=keep, name=name, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=10)
