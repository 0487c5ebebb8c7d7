"""What stops a command, and the exit codes it maps to.

0 PASS (or the command did its job), 1 FAIL, 2 could not decide. A 1 always means the
gate said FAIL; everything that goes wrong is an EvalgateError and exits 2. A reader that
closes standard output early (``evalgate cases | head``) ends the command quietly with
141, as a process stopped by SIGPIPE does, except the gate: its verdict is its exit code.
"""

from __future__ import annotations

EXIT_PASS = 0
EXIT_FAIL = 1
EXIT_UNDECIDED = 2
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what a shell reports for a writer whose reader left


class EvalgateError(Exception):
    """Something stopped a command from finishing; the command line exits 2 for it."""

    def __init__(self, message: str, details: list[str] | None = None):
        super().__init__(message)
        self.message = message
        self.details = list(details or [])


class ApiError(EvalgateError):
    """The server answered an HTTP error. ``problem`` is its problem+json body, if any."""

    def __init__(self, message: str, *, status: int, problem: dict | None = None, details: list[str] | None = None):
        super().__init__(message, details)
        self.status = status
        self.problem = problem
