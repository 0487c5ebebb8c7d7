"""Run Reservo over its golden set, upload the runs as an experiment, and ask the gate.

    python -m examples.reservo --experiment v2 [--override CASE=SCRIPT.json]... [--trials N]
                               [--flaky CASE=T[,T...]]... [--url URL --key KEY]

Creates (or updates) the dataset from ``golden_cases.jsonl``, then
``evalgate.run_regression_gate`` runs the agent for every active case with the case's
own model script (``--override`` replaces one case's script and nothing else; SCRIPT is
a file, or a name from ``scripts/``), uploads the runs as the experiment and asks the
gate. ``--trials N`` runs each case N times, trials numbered; ``--flaky CASE=2,3`` makes
that case behave like the seed's regressed script (it books instead of quoting) on the
listed trial numbers only, so a flaky case can be shown deterministically. It prints exactly what ``evalgate gate`` prints and exits with its code: 0 PASS,
1 FAIL, 2 could not decide.
"""

import argparse
import sys

import evalgate
from evalgate.cli import verdict_deliver

from . import GOLDEN_CASES_PATH, load_script
from .tracing import reservo_agent


def overrides_parse(values):
    overrides = {}
    for value in values:
        case, sep, script = value.partition("=")
        if not sep or not case or not script:
            raise SystemExit(f"--override takes CASE=SCRIPT.json, got {value!r}")
        try:
            overrides[case] = load_script(script)
        except (OSError, ValueError) as exc:
            raise SystemExit(f"--override {value}: cannot read the script: {exc}") from None
    return overrides


FLAKY_SCRIPT = "quote_books_instead"


def flaky_parse(values, trials):
    """``{case: {trial: the regressed script}}`` from ``CASE=T[,T...]`` values."""
    flaky = {}
    for value in values:
        case, sep, numbers = value.partition("=")
        try:
            chosen = {int(n) for n in numbers.split(",") if n.strip()}
        except ValueError:
            chosen = set()
        if not sep or not case or not chosen or not all(1 <= n <= trials for n in chosen):
            raise SystemExit(f"--flaky takes CASE=T[,T...] with trial numbers from 1 to {trials}, got {value!r}")
        flaky[case] = dict.fromkeys(sorted(chosen), load_script(FLAKY_SCRIPT))
    return flaky


def experiment_gate(
    *, client, dataset, experiment, overrides, set_baseline=False, golden_path=GOLDEN_CASES_PATH, trials=1, flaky=None
):
    """Import the golden set, run every active case, upload the runs and ask the gate; returns the GateReport."""
    with open(golden_path, "rb") as fh:
        evalgate.cases_import(client, dataset, fh.read())
    cases = evalgate.fetch_cases(client, dataset)
    unknown = sorted((set(overrides) | set(flaky or {})) - {c["name"] for c in cases})
    if unknown:
        raise evalgate.EvalgateError(f"--override names cases that are not in dataset {dataset}: {', '.join(unknown)}")
    return evalgate.run_regression_gate(
        cases, reservo_agent, overrides, dataset=dataset, experiment=experiment, set_baseline=set_baseline,
        trials=trials, trial_overrides=flaky, client=client,
    )  # fmt: skip


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m examples.reservo", description=__doc__.splitlines()[0])
    parser.add_argument("--experiment", required=True)
    parser.add_argument("--override", action="append", default=[], metavar="CASE=SCRIPT.json")
    parser.add_argument("--trials", type=int, default=1, help="run each case N times, trials numbered")
    parser.add_argument("--flaky", action="append", default=[], metavar="CASE=T[,T...]")
    parser.add_argument("--dataset", default="reservo")
    parser.add_argument("--url", help="evalsite server (default: $EVALSITE_URL)")
    parser.add_argument("--key", help="project API key (default: $EVALSITE_API_KEY)")
    parser.add_argument("--set-baseline", action="store_true", help="record a PASS as the new baseline")
    parser.add_argument("--junit", help="write a JUnit XML report")
    parser.add_argument("--summary", help="append a Markdown summary")
    args = parser.parse_args(argv)
    overrides = overrides_parse(args.override)
    if args.trials < 1:
        raise SystemExit("--trials must be at least 1")
    flaky = flaky_parse(args.flaky, args.trials)
    try:
        report = experiment_gate(
            client=evalgate.client_for(args.url, args.key), dataset=args.dataset, experiment=args.experiment,
            overrides=overrides, set_baseline=args.set_baseline, trials=args.trials, flaky=flaky,
        )  # fmt: skip
        return verdict_deliver(report.answer, junit=args.junit, summary=args.summary)
    except evalgate.EvalgateError as exc:
        print(f"reservo: could not decide: {exc.message}", file=sys.stderr)
        for line in exc.details:
            print(f"  {line}", file=sys.stderr)
        return evalgate.EXIT_UNDECIDED


if __name__ == "__main__":
    sys.exit(main())
