"""Capture runs into a dataset: one golden case per run.

The case takes the run's ``input`` and keeps ``source_trace_id`` (and a link to the
run, which becomes null if the run is deleted; the id stays). By default the run's own
answer is NOT the expected answer: runs worth capturing are usually failures, and a
wrong answer kept as the reference would measure every later version by how well it
reproduces the failure. Such a case has ``expected_output = null`` ("needs expected
answer") until a reviewer writes one, or the request gives one. With
``use_output_as_expected: true`` the run's answer becomes the expected answer.

The API and the pages never call this module directly: they go through the capture
guard, ``scoring.review.capture_guard.cases_capture_guarded``, which first refuses (or
skips) a run that failed a check when its answer would become the reference, then
calls ``cases_capture`` here. The guard sits in ``scoring`` because it reads scores.

Capturing a run that the dataset already holds returns the existing case unchanged
(no twin, no update): the request is safe to retry.
"""

from dataclasses import dataclass

from django.db import IntegrityError, transaction

from datasets.case_validation import (
    CASE_FIELD_SCHEMAS,
    CASE_NAME_MAX,
    TRACE_ID_MAX,
    case_name_check,
    expectations_check,
    json_value_problem,
    unknown_key_message,
)
from datasets.cases import revisions_write_created, writable_dataset_check
from datasets.models import CaseStatus, GoldenCase, Trace
from evalsite.errors import Conflict, Invalid

MAX_TRACES_PER_CAPTURE = 500
CAPTURE_FIELDS = ("trace_ids", "use_output_as_expected", "expected_output", "expectations", "name")


@dataclass
class Captured:
    trace_id: str
    case: GoldenCase
    created: bool


def cases_capture(*, dataset, data, by, max_runs=MAX_TRACES_PER_CAPTURE):
    """Capture the runs named in ``data`` into ``dataset``; returns ``[Captured]`` in request order.

    ``data``: ``trace_ids`` (required, 1..``max_runs`` runs of the dataset's project;
    500 unless a caller with its own bound says otherwise; repeats are captured once), ``use_output_as_expected`` (default false), and optionally
    ``expected_output`` and ``expectations`` (given to every new case) and ``name``
    (only with a single run; by default a case is named after its run's ``trace_id``,
    with ``-2``, ``-3``... added when the name is taken). Atomic: every new case and
    its ``created`` revision is written, or nothing. Raises ``Invalid`` for a bad field
    or a run that is not in the project, ``Conflict`` when the ``name`` asked for is
    taken.
    """
    request = _capture_request_clean(data, max_runs)
    writable_dataset_check(dataset)
    for attempt in range(2):
        try:
            with transaction.atomic():
                return _capture(dataset, request, by)
        except IntegrityError:
            # A concurrent capture of the same run (or a case taking the same name)
            # won the race; the second attempt finds it and returns it.
            if attempt:
                raise Conflict("Another request captured the same runs at the same time; retry.") from None
    raise AssertionError("unreachable")


def _capture(dataset, request, by):
    trace_ids = request["trace_ids"]
    runs = {
        t.trace_id: t
        for t in Trace.objects.filter(project_id=dataset.project_id, trace_id__in=trace_ids).only(
            "id", "trace_id", "input", "output"
        )
    }
    missing = [
        {"field": f"trace_ids[{i}]", "message": f"no run with trace_id {trace_id!r} in this project"}
        for i, trace_id in enumerate(request["given_ids"])
        if trace_id not in runs
    ]
    if missing:
        raise Invalid("Some runs are not in this project; nothing was captured.", errors=missing)

    existing = {
        c.source_trace_id: c
        for c in GoldenCase.objects.filter(dataset=dataset, source_trace_id__in=trace_ids).select_related("dataset")
    }
    new_ids = [t for t in trace_ids if t not in existing]
    names = _names_choose(dataset, new_ids, request.get("name"))
    # Inserted in bulk (the cases, then their revisions), not two statements per run: a
    # capture of thousands of runs stays one short transaction.
    cases = GoldenCase.objects.bulk_create(
        GoldenCase(
            dataset=dataset,
            name=names[trace_id],
            input=runs[trace_id].input,
            expected_output=runs[trace_id].output
            if request["use_output_as_expected"]
            else request.get("expected_output"),
            expectations=request.get("expectations") or {},
            status=CaseStatus.ACTIVE,
            source_trace_id=trace_id,
            source_run=runs[trace_id],
            version=1,
        )
        for trace_id in new_ids
    )
    revisions_write_created(cases=cases, by=by)
    created = {case.source_trace_id: case for case in cases}
    return [
        Captured(trace_id, created[trace_id], True)
        if trace_id in created
        else Captured(trace_id, existing[trace_id], False)
        for trace_id in trace_ids
    ]


def _names_choose(dataset, trace_ids, asked):
    """A free case name for each new run: the one asked for, or the run's trace_id made unique."""
    if not trace_ids:
        return {}
    if asked is not None:
        if GoldenCase.objects.filter(dataset=dataset, name=asked).exists():
            raise Conflict(
                f"Dataset {dataset.name!r} already has a case named {asked!r}.",
                errors=[{"field": "name", "message": "is already the name of another case in this dataset"}],
            )
        return {trace_ids[0]: asked}
    bases = {t: _name_from_trace_id(t) for t in trace_ids}
    taken = set(
        GoldenCase.objects.filter(dataset=dataset, name__in=list(bases.values())).values_list("name", flat=True)
    )
    searched = set()
    names = {}
    for trace_id, base in bases.items():
        name, n = base, 1
        while name in taken:
            if base not in searched:
                # Only a name that collides costs a query: the numbered names already used.
                searched.add(base)
                taken.update(
                    GoldenCase.objects.filter(dataset=dataset, name__startswith=base[: CASE_NAME_MAX - 8]).values_list(
                        "name", flat=True
                    )
                )
            n += 1
            suffix = f"-{n}"
            name = base[: CASE_NAME_MAX - len(suffix)] + suffix
        taken.add(name)
        names[trace_id] = name
    return names


def _name_from_trace_id(trace_id):
    name, problems = case_name_check(" ".join(trace_id.split()))
    if problems or not name:
        name = "run"
    return name[:CASE_NAME_MAX]


CAPTURE_REQUEST_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["trace_ids"],
    "properties": {
        "trace_ids": {
            "type": "array",
            "minItems": 1,
            "maxItems": MAX_TRACES_PER_CAPTURE,
            "items": {"type": "string", "minLength": 1, "maxLength": TRACE_ID_MAX},
        },
        "use_output_as_expected": {
            "type": "boolean",
            "default": False,
            "description": "Take each run's answer as the expected answer. Off by default: a captured failure's "
            "answer is not the reference.",
        },
        "expected_output": {
            **CASE_FIELD_SCHEMAS["expected_output"],
            "description": "The expected answer for every new case (not with use_output_as_expected).",
        },
        "expectations": {**CASE_FIELD_SCHEMAS["expectations"], "description": "Expectations for every new case."},
        "name": {
            **CASE_FIELD_SCHEMAS["name"],
            "type": ["string", "null"],
            "description": "Case name; only when capturing a single run.",
        },
    },
}


def _capture_request_clean(data, max_runs=MAX_TRACES_PER_CAPTURE):
    if not isinstance(data, dict):
        raise Invalid("The body must be a JSON object.", errors=[{"field": None, "message": "must be a JSON object"}])
    errors = [
        {"field": str(key), "message": unknown_key_message(key, CAPTURE_FIELDS)}
        for key in data
        if key not in CAPTURE_FIELDS
    ]
    request = {}
    trace_ids = data.get("trace_ids")
    if "trace_ids" not in data:
        errors.append({"field": "trace_ids", "message": "is required: the trace_ids of the runs to capture"})
    elif not isinstance(trace_ids, list) or not trace_ids:
        errors.append({"field": "trace_ids", "message": "must be a non-empty list of trace_ids"})
    elif len(trace_ids) > max_runs:
        errors.append({"field": "trace_ids", "message": f"must list at most {max_runs} runs"})
    else:
        bad = [
            i
            for i, t in enumerate(trace_ids)
            if not isinstance(t, str) or not t or len(t) > TRACE_ID_MAX or "\x00" in t
        ]
        errors.extend({"field": f"trace_ids[{i}]", "message": "must be a trace_id (a non-empty string)"} for i in bad)
        request["given_ids"] = trace_ids
        # Only strings can be de-duplicated (an object is unhashable): the rest are errors above.
        request["trace_ids"] = list(dict.fromkeys(t for t in trace_ids if isinstance(t, str)))
    use_output = data.get("use_output_as_expected", False)
    if not isinstance(use_output, bool):
        errors.append({"field": "use_output_as_expected", "message": "must be true or false"})
    request["use_output_as_expected"] = use_output is True
    if "expected_output" in data:
        if use_output is True:
            errors.append(
                {
                    "field": "expected_output",
                    "message": "give either expected_output or use_output_as_expected: true, not both",
                }
            )
        request["expected_output"] = data["expected_output"]
        problem = json_value_problem(data["expected_output"])
        if problem:
            errors.append({"field": "expected_output", "message": problem})
    if "expectations" in data:
        request["expectations"], problems = expectations_check(data["expectations"])
        errors.extend(problems)
    if data.get("name") is not None:
        request["name"], problems = case_name_check(data["name"])
        errors.extend(problems)
        if len(request.get("trace_ids") or []) > 1:
            errors.append({"field": "name", "message": "can only be given when capturing a single run"})
    if errors:
        raise Invalid("The capture request has invalid fields; nothing was captured.", errors=errors)
    return request
