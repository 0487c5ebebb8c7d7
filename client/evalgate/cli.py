"""The ``evalgate`` command line: ``cases``, ``import``, ``upload`` and ``gate``."""

from __future__ import annotations

import argparse
import math
import os
import sys
import traceback

from .calls import (
    DEFAULT_POLL_INTERVAL,
    MAX_BATCH,
    cases_import,
    fetch_cases,
    read_runs,
    request_gate,
    trials_check,
    upload_runs,
)
from .comment import FORGES, comment_post
from .errors import EXIT_BROKEN_PIPE, EXIT_FAIL, EXIT_PASS, EXIT_UNDECIDED, EvalgateError
from .files import jsonl_write, parent_ensure, write_json
from .http import DEFAULT_MAX_WAIT, DEFAULT_TIMEOUT, Client, client_for
from .junit import junit_xml, undecided_junit, write_junit
from .lines import format_verdict
from .markdown import append_markdown, format_markdown, undecided_markdown
from .version import __version__


def _client(args, max_wait: float = DEFAULT_MAX_WAIT) -> Client:
    return client_for(args.url, args.key, timeout=args.timeout, max_wait=max_wait)


def _cmd_cases(args) -> int:
    client = _client(args)
    cases = fetch_cases(client, args.dataset)
    if args.output and args.output != "-":
        parent_ensure(args.output)
        partial = f"{args.output}.part"  # a reader never sees half a golden set
        with open(partial, "w", encoding="utf-8") as fh:
            jsonl_write(cases, fh)
        os.replace(partial, args.output)
    else:
        jsonl_write(cases, sys.stdout)
        sys.stdout.flush()
    print(f"fetched {len(cases)} cases of dataset {args.dataset}", file=sys.stderr)
    return EXIT_PASS


def _cmd_import(args) -> int:
    try:
        with open(args.cases, "rb") as fh:
            body = fh.read()
    except OSError as exc:
        raise EvalgateError(f"cannot read {args.cases}: {exc.strerror or exc}") from None
    answer = cases_import(_client(args), args.dataset, body, create=not args.no_create)
    counts = ", ".join(f"{answer[k]} {k}" for k in ("created", "updated", "unchanged") if k in answer)
    print(f"imported {args.cases} into dataset {args.dataset} ({counts})")
    return EXIT_PASS


def _cmd_upload(args) -> int:
    if args.runs == "-":
        if hasattr(sys.stdin, "buffer"):  # JSONL is UTF-8 whatever the locale says
            with open(sys.stdin.fileno(), encoding="utf-8", closefd=False) as fh:
                runs, origins = read_runs(fh, "<stdin>")
        else:
            runs, origins = read_runs(sys.stdin, "<stdin>")
    else:
        try:
            with open(args.runs, encoding="utf-8") as fh:
                runs, origins = read_runs(fh, args.runs)
        except OSError as exc:
            raise EvalgateError(f"cannot read {args.runs}: {exc.strerror or exc}") from None
    client = _client(args, args.max_wait)
    totals = upload_runs(
        client, runs, experiment=args.experiment, batch_size=args.batch_size, origins=origins, attempt=args.attempt
    )
    print(f"uploaded {totals['runs']} runs ({totals['created']} created, {totals['unchanged']} unchanged)")
    return EXIT_PASS


def _cmd_gate(args) -> int:
    try:
        client = _client(args, args.max_wait)
        if args.trials is not None:
            trials_check(client, args.dataset, args.trials)
        verdict = request_gate(
            client,
            dataset=args.dataset,
            experiment=args.experiment,
            baseline=args.baseline,
            set_baseline=args.set_baseline,
            init_floor=args.init_floor,
            poll_interval=args.poll_interval,
        )
    except EvalgateError as exc:
        # CI still gets its reports: a test report that says why beats a missing one.
        message = "could not decide: " + "; ".join([exc.message, *exc.details])
        try:
            if args.junit:
                write_junit(undecided_junit(args.dataset, message), args.junit)
            if args.summary:
                append_markdown(undecided_markdown(args.dataset, args.experiment, exc), args.summary)
        except OSError as write_error:
            exc.details.append(f"could not write the report: {write_error}")
        _comment(args, undecided_markdown(args.dataset, args.experiment, exc))
        raise
    code = verdict_deliver(verdict, junit=args.junit, summary=args.summary, json_path=args.json)
    _comment(args, format_markdown(verdict))
    return code


def _comment(args, markdown: str) -> None:
    """Post the report as the request's sticky comment, if asked; a failure to comment
    is a warning, never the verdict (a FAIL stays 1, a PASS 0)."""
    if not args.comment:
        return
    try:
        posted = comment_post(
            markdown,
            forge=args.comment,
            timeout=args.timeout,
            dataset=args.dataset,
            server=args.url or os.environ.get("EVALSITE_URL"),
        )
    except EvalgateError as exc:
        details = "".join(f"\n  {line}" for line in exc.details)
        print(f"evalgate: warning: no {args.comment} comment: {exc.message}{details}", file=sys.stderr)
        return
    if posted is None:
        print(f"evalgate: not a {args.comment} pull or merge request: no comment", file=sys.stderr)
    else:
        print(
            f"evalgate: {posted['action']} the {args.comment} comment {posted['url'] or posted['id']}", file=sys.stderr
        )


def verdict_deliver(
    verdict: dict, *, junit: str | None = None, summary: str | None = None, json_path: str | None = None
) -> int:
    """Print the verdict as ``evalgate gate`` does, write the reports asked for; returns the exit code.

    A reader that stops early (``| head``) does not change the verdict: the reports are
    still written and the exit code is still the verdict's.
    """
    try:
        print(format_verdict(verdict))
        sys.stdout.flush()
    except BrokenPipeError:
        stdout_silence()
    try:
        if junit:
            write_junit(junit_xml(verdict), junit)
        if summary:
            append_markdown(format_markdown(verdict), summary)
        if json_path:
            write_json(verdict, json_path)
    except OSError as exc:
        raise EvalgateError(f"the verdict is {verdict['verdict']}, but writing a report failed: {exc}") from None
    return EXIT_PASS if verdict["verdict"] == "PASS" else EXIT_FAIL


def stdout_silence() -> None:
    """Point standard output at the null device once its reader is gone.

    Python flushes stdout again at exit, and would print a BrokenPipeError to stderr
    (the recipe in the ``signal`` module's documentation).
    """
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout replaced by something without a descriptor
        pass
    finally:
        os.close(devnull)


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text!r}")
    return value


def _non_negative(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"must be zero or more seconds, got {text!r}")
    return value


def _batch_size(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if not 1 <= value <= MAX_BATCH:
        raise argparse.ArgumentTypeError(f"must be between 1 and {MAX_BATCH}, got {value}")
    return value


def _trials(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, got {value}")
    return value


def _connection_options(parser: argparse.ArgumentParser, default) -> None:
    parser.add_argument("--url", default=default, help="evalsite server (default: $EVALSITE_URL)")
    parser.add_argument(
        "--key", default=default, help="project API key (default: $EVALSITE_API_KEY; prefer the variable)"
    )
    parser.add_argument(
        "--timeout",
        type=_positive,
        default=DEFAULT_TIMEOUT if default is None else default,
        help=f"seconds per request before giving up (default: {DEFAULT_TIMEOUT:g})",
    )


_CASES_DOC = "GET /v1/api/datasets/D/cases, every page, written one JSON case per line."
_IMPORT_DOC = (
    "POST a JSONL golden set to /v1/api/datasets/D/import (all or nothing; cases are matched by name), "
    "creating the dataset first if it does not exist."
)
_UPLOAD_DOC = "POST the runs to /v1/api/traces in batches of at most 500; prints the created/unchanged counts."
_GATE_DOC = "POST /v1/api/gate and print the verdict. Exit 0 PASS, 1 FAIL, 2 could not decide."


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="evalgate",
        description="Fetch golden cases, upload agent runs and ask evalsite's gate for a verdict.",
        epilog="Exit codes: 0 PASS or done, 1 FAIL, 2 could not decide (errors).",
    )
    parser.add_argument("--version", action="version", version=f"evalgate {__version__}")
    _connection_options(parser, None)
    # The same options after the command name; SUPPRESS keeps a subcommand's absent
    # option from overwriting one given before it.
    common = argparse.ArgumentParser(add_help=False)
    _connection_options(common, argparse.SUPPRESS)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True

    cases = commands.add_parser(
        "cases", parents=[common], help="write a dataset's active cases as JSONL", description=_CASES_DOC
    )
    cases.add_argument("--dataset", required=True)
    cases.add_argument("--output", "-o", help="file to write (default: standard output)")
    cases.set_defaults(handler=_cmd_cases)

    importer = commands.add_parser(
        "import", parents=[common], help="import a JSONL golden set into a dataset", description=_IMPORT_DOC
    )
    importer.add_argument("cases", help="JSONL file, one case per line (the export format)")
    importer.add_argument("--dataset", required=True)
    importer.add_argument("--no-create", action="store_true", help="fail if the dataset does not exist")
    importer.set_defaults(handler=_cmd_import)

    upload = commands.add_parser("upload", parents=[common], help="upload runs from JSONL", description=_UPLOAD_DOC)
    upload.add_argument("runs", help="JSONL file, one run per line; - for standard input")
    upload.add_argument("--experiment", help="experiment set on runs that name none")
    upload.add_argument("--batch-size", type=_batch_size, default=MAX_BATCH, help=f"runs per request (max {MAX_BATCH})")
    upload.add_argument(
        "--attempt",
        help="the CI attempt (e.g. $GITHUB_RUN_ID-$GITHUB_RUN_ATTEMPT): a re-run's runs supersede the first's",
    )
    upload.add_argument(
        "--max-wait",
        type=_non_negative,
        default=DEFAULT_MAX_WAIT,
        help="seconds to wait on 429s in total (default: 300)",
    )
    upload.set_defaults(handler=_cmd_upload)

    _gate_parser(commands, common)
    return parser


def _gate_parser(commands, common) -> None:
    gate = commands.add_parser("gate", parents=[common], help="ask for the PASS/FAIL verdict", description=_GATE_DOC)
    gate.add_argument("--dataset", required=True)
    gate.add_argument("--experiment", required=True)
    gate.add_argument("--baseline", help="experiment to compare with (default: the gate policy's baseline)")
    gate.add_argument("--set-baseline", action="store_true", help="record this run as the new baseline if it passes")
    gate.add_argument(
        "--init-floor",
        action="store_true",
        help="with --set-baseline on a dataset with no baseline yet: record it pass or fail, floor at its pass rate",
    )
    gate.add_argument(
        "--trials",
        type=_trials,
        help="runs of each case the workflow recorded; the gate is not asked unless the policy needs as many",
    )
    gate.add_argument("--junit", help="write a JUnit XML report to this file")
    gate.add_argument("--summary", help="append a Markdown report to this file (e.g. $GITHUB_STEP_SUMMARY)")
    gate.add_argument(
        "--comment",
        choices=sorted(FORGES),
        help="post the Markdown report as one comment on the pull (github) or merge (gitlab) request, "
        "updated on each run; token in EVALGATE_GITHUB_TOKEN or GITHUB_TOKEN / EVALGATE_GITLAB_TOKEN",
    )
    gate.add_argument("--json", help="write the whole verdict as JSON to this file (e.g. regression_report.json)")
    gate.add_argument(
        "--poll-interval", type=_positive, default=DEFAULT_POLL_INTERVAL, help="seconds between polls (default: 2)"
    )
    gate.add_argument(
        "--max-wait",
        type=_non_negative,
        default=DEFAULT_MAX_WAIT,
        help="seconds to wait for a running gate and on 429s in total (default: 300)",
    )
    gate.set_defaults(handler=_cmd_gate)


def _report(error: EvalgateError, command: str | None) -> None:
    prefix = "could not decide" if command == "gate" else "error"
    print(f"evalgate: {prefix}: {error.message}", file=sys.stderr)
    for line in error.details:
        print(f"  {line}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit code (0 PASS/done, 1 FAIL, 2 could not decide)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # -h, --version (0) and usage errors (2)
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else EXIT_UNDECIDED)
    # --summary "$GITHUB_STEP_SUMMARY" outside GitHub expands to "": no report, not an error.
    for option in ("junit", "summary", "output", "json"):
        if getattr(args, option, None) == "":
            setattr(args, option, None)
    try:
        return args.handler(args)
    except EvalgateError as exc:
        _report(exc, args.command)
        return EXIT_UNDECIDED
    except BrokenPipeError:  # the reader of stdout left (| head): nothing went wrong here
        stdout_silence()
        return EXIT_BROKEN_PIPE
    except Exception:  # a bug must never exit 1, which CI would read as the gate's FAIL
        print("evalgate: internal error (please report it):", file=sys.stderr)
        traceback.print_exc()
        return EXIT_UNDECIDED


if __name__ == "__main__":
    sys.exit(main())
