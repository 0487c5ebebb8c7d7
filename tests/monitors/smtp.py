"""A real SMTP server on loopback for the e-mail tests (aiosmtpd in a thread).

It answers ``451`` to the first ``failures`` DATA commands for each recipient (a
greylisting server's "try again later") and then accepts; ``received`` lists each
accepted message as ``(recipients, email.message.Message)``.
"""

import contextlib
import email
import email.policy
import threading

from aiosmtpd.controller import Controller

from tests.live import free_port


class _Handler:
    def __init__(self, failures, refuse):
        self.failures, self.refuse = failures, set(refuse)
        self.tries, self.received, self.lock = {}, [], threading.Lock()

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):  # noqa: N802 - aiosmtpd names it
        if address in self.refuse:
            return "550 5.1.1 No such mailbox"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):  # noqa: N802 - aiosmtpd names it
        key = tuple(envelope.rcpt_tos)
        with self.lock:
            self.tries[key] = self.tries.get(key, 0) + 1
            if self.tries[key] <= self.failures:
                return "451 4.7.1 Try again later"
            message = email.message_from_bytes(envelope.content, policy=email.policy.default)
            self.received.append((list(envelope.rcpt_tos), message))
        return "250 Message accepted"


@contextlib.contextmanager
def smtp_server(*, failures=0, refuse=()):
    """Yields ``(port, received)``."""
    handler = _Handler(failures, refuse)
    controller = Controller(handler, hostname="127.0.0.1", port=free_port())
    controller.start()
    try:
        yield controller.port, handler.received
    finally:
        controller.stop()
