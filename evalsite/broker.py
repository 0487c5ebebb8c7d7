"""Sending a task from a request when the broker may be away.

A request that stored work (a pass, a gate run) and then cannot reach the broker must
not answer 500 over what it stored: the work stays queued in the database, the answer
is the usual 202, and the sweeper every worker runs sends it once the broker is back
(``scoring.passes.services.passes_resume``, ``gating.gate_worker.gate_runs_resume``).
"""

import logging

from kombu.exceptions import OperationalError as BrokerUnavailable

logger = logging.getLogger(__name__)

# kombu wraps the transport's connection errors (Redis refused, timed out) in its own
# OperationalError after its publish retries; a socket error may still slip through.
BROKER_ERRORS = (BrokerUnavailable, ConnectionError, TimeoutError)


def send_or_leave_to_sweeper(send, *, what):
    """Call ``send()``; when the broker cannot be reached, log it and return False."""
    try:
        send()
    except BROKER_ERRORS as exc:
        logger.warning("broker unavailable, %s stays queued for the sweeper: %s", what, exc)
        return False
    return True
