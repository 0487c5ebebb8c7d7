"""evalgate: the evalsite client for CI, a tracing helper for agents, and the seed's gate API.

Standard library only, Python 3.9+. Install it with ``pip install ./client`` (or
``pip install "evalgate @ git+<repository>#subdirectory=client"``); it brings the
``evalgate`` command:

    evalgate cases  --dataset D [--output FILE]
    evalgate import --dataset D golden_cases.jsonl
    evalgate upload --experiment E runs.jsonl
    evalgate gate   --dataset D --experiment E [--baseline B] [--set-baseline]
                    [--junit FILE] [--summary FILE]

The contract (docs/evalgate.md is the long form, docs/gate.md the server's answer):

- The server is named by ``--url`` or ``EVALSITE_URL``, the project key by ``--key`` or
  ``EVALSITE_API_KEY``; every request sends ``Authorization: Bearer <key>``. Redirects
  are never followed, so the key only ever goes to the configured server.
- Exit codes: 0 PASS (or the command did its job), 1 FAIL, 2 could not decide (server
  unreachable or timed out, an error answer, an answer evalgate cannot read, bad input,
  or a bug in evalgate). A 1 always means the gate said FAIL; nothing else returns 1.
- ``gate`` prints ``GATE: PASS (p/t)`` or ``GATE: FAIL (p/t)``, then one line per case
  in the server's order, ``f"  {name:38} {PASS|FAIL}"``, a failure followed by
  ``  -- `` and the evidence of its failed checks. These 1 + N lines are a stable format
  that CI logs and scripts read; what follows them is for people.
- 429 answers are retried after ``Retry-After``; every wait (and gate polling) counts
  against ``--max-wait`` so a CI job never hangs.
- ``Tracer`` records agent runs as the ``POST /v1/api/traces`` payload (ARCHITECTURE
  section 9), uploads them in batches like ``upload``, or writes them as JSONL.
- ``feedback`` sends an end user's feedback on a run (a key of the ``feedback`` scope).
- ``run_case`` / ``run_regression_gate`` run an agent over golden cases, upload the
  runs and ask the server's gate, returning the seed's ``CaseResult`` / ``GateReport``.
"""

from .calls import cases_import, feedback, fetch_cases, read_runs, request_gate, upload_runs
from .cli import main
from .comment import comment_body, comment_marker, comment_post
from .errors import EXIT_FAIL, EXIT_PASS, EXIT_UNDECIDED, ApiError, EvalgateError
from .harness import CaseResult, GateReport, assert_case, run_case, run_regression_gate, summarize_failures
from .http import Client, RetryPolicy, WaitBudget, client_for
from .junit import junit_xml, write_junit
from .lines import case_evidence, case_line, format_verdict
from .markdown import append_markdown, format_markdown
from .tracing import Run, Span, Tracer
from .version import __version__

__all__ = [
    "EXIT_FAIL",
    "EXIT_PASS",
    "EXIT_UNDECIDED",
    "ApiError",
    "CaseResult",
    "Client",
    "EvalgateError",
    "GateReport",
    "RetryPolicy",
    "Run",
    "Span",
    "Tracer",
    "WaitBudget",
    "__version__",
    "append_markdown",
    "assert_case",
    "case_evidence",
    "case_line",
    "cases_import",
    "client_for",
    "comment_body",
    "comment_marker",
    "comment_post",
    "feedback",
    "fetch_cases",
    "format_markdown",
    "format_verdict",
    "junit_xml",
    "main",
    "read_runs",
    "request_gate",
    "run_case",
    "run_regression_gate",
    "summarize_failures",
    "upload_runs",
    "write_junit",
]
