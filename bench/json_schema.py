"""Benchmark: the JSON Schema check of ``json_valid`` against jsonschema-rs, on the reference workload.

The reference workload's schema check (``../shared/workloads``: its ``SCHEMA`` over the
answers of N traces that parse as JSON) is run three ways, in turns, in one process:

- ``current``: ``checks.scorers.schemas.schema_errors`` as the scorer calls it (the
  quick screen, then jsonschema for the errors of an invalid answer);
- ``rs_then_python``: jsonschema-rs ``is_valid`` first, jsonschema for the errors of an
  invalid answer (the errors, and so the reasons shown, stay jsonschema's own);
- ``rs_errors``: jsonschema-rs alone, its errors in the scorer's shape (its messages differ).

Each round times every answer under each way, the ways in turn (the order rotating each
round), for at least five rounds; the report gives the median µs per check and the
differences of each way's results from ``current`` (same errors, paths, messages).
Then a few values beyond the workload that jsonschema-rs may read otherwise (integers
past 64 bits, non-finite floats, lone surrogates, an older draft's ``format``): for
each, whether ``rs_then_python`` still gives ``current``'s errors.

    .venv/bin/python bench/json_schema.py [--traces 10000] [--rounds 7]
"""

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
WORKLOAD = Path(os.environ.get("BENCH_WORKLOAD", ROOT.parent / "shared" / "workloads"))


def answers(traces):
    """The workload's answers that parse as JSON: what the schema check sees."""
    sys.path.append(str(WORKLOAD))  # after evalsite's own ``checks``: the workload has a checks.py too
    import gen_traces

    parsed = []
    for i in range(traces):
        output = gen_traces.make_trace(42, i)["output"]
        try:
            parsed.append(json.loads(output))
        except ValueError:
            continue
    return gen_traces.SCHEMA, parsed


def ways(schema):
    import jsonschema_rs

    from checks.scorers.schemas import schema_errors
    from checks.scorers.values import json_path

    rs = jsonschema_rs.validator_for(schema)

    def current(instance):
        return schema_errors(schema, instance)

    def rs_then_python(instance):
        return [] if rs.is_valid(instance) else schema_errors(schema, instance)

    def rs_errors(instance):
        errors = [
            {"path": json_path(e.instance_path), "message": e.message[:300], "validator": type(e.kind).__name__}
            for e in rs.iter_errors(instance)
        ]
        errors.sort(key=lambda e: (e["path"], e["validator"], e["message"]))
        return errors

    return {"current": current, "rs_then_python": rs_then_python, "rs_errors": rs_errors}


def timed(check, instances):
    start = time.perf_counter()
    for instance in instances:
        check(instance)
    return (time.perf_counter() - start) / len(instances) * 1e6


def differences(reference, check, instances):
    """How many answers get other results, other messages only, and one example of each."""
    results = messages = 0
    example = None
    for instance in instances:
        want, got = reference(instance), check(instance)
        if [(e["path"], bool(e)) for e in want] != [(e["path"], bool(e)) for e in got] or bool(want) != bool(got):
            results += 1
        elif [e["message"] for e in want] != [e["message"] for e in got]:
            messages += 1
            example = example or (want[0]["message"], got[0]["message"])
    return {"other_results": results, "other_messages": messages, "example": example}


EDGES = [
    ({"maximum": 9007199254740992.0}, 9007199254740993),
    ({"minimum": 0}, -(10**30)),
    ({"type": "integer"}, 10**30),
    ({"maxLength": 1}, "\ud800"),
    ({"$schema": "http://json-schema.org/draft-07/schema#", "type": "string", "format": "email"}, "nope"),
    ({"type": "number", "maximum": 10}, float("inf")),
    ({"maximum": 10}, float("inf")),
    ({"type": "null"}, float("nan")),
]


def edges():
    """``(schema, value, same)`` for values beyond the workload: does rs-then-jsonschema keep the errors?"""
    from checks.scorers.schemas import schema_errors

    found = []
    for schema, value in EDGES:
        check = ways(schema)["rs_then_python"]
        try:
            same = check(value) == schema_errors(schema, value)
        except ValueError as exc:  # jsonschema-rs cannot take the value: the fallback would be asked
            same = f"raises {type(exc).__name__} (fallback)"
        found.append((schema, value, same))
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=int, default=10000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    from importlib.metadata import version

    schema, instances = answers(args.traces)
    checks = ways(schema)
    invalid = sum(1 for i in instances if checks["current"](i))
    times = {name: [] for name in checks}
    names = list(checks)
    for number in range(max(5, args.rounds)):
        for name in names[number % len(names) :] + names[: number % len(names)]:
            times[name].append(timed(checks[name], instances))
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, load {os.getloadavg()}")
    print(
        f"python {platform.python_version()}, jsonschema {version('jsonschema')}, jsonschema-rs {version('jsonschema-rs')}"
    )
    print(
        f"{len(instances)} answers that parse as JSON ({invalid} invalid by the schema), {max(5, args.rounds)} rounds"
    )
    for name in names:
        median = statistics.median(times[name])
        spread = f"{min(times[name]):.2f}..{max(times[name]):.2f}"
        same = differences(checks["current"], checks[name], instances) if name != "current" else None
        print(f"  {name:15} {median:6.2f} µs/check (min..max {spread})" + (f"  vs current: {same}" if same else ""))
    print("values beyond the workload, rs_then_python's errors == current's:")
    for schema, value, same in edges():
        print(f"  {json.dumps(schema)[:70]:72} {value!r:24} {same}")


if __name__ == "__main__":
    main()
