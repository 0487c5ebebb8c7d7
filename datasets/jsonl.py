"""A dataset's cases as JSON Lines, out and back in, so a golden set can live in a repository.

One case per line, with exactly these keys (``name`` required on import, the others
optional): ``name, input, expected_output, expectations, status, notes, metadata,
source_trace_id``. Export writes all of them, so exporting and importing into an empty
dataset reproduces the cases.

Import is all or nothing. Every line is checked before anything is written; a bad line
is a 400 whose ``errors`` carry the ``line`` number (1-based, blank lines counted), the
case ``field`` and a message that starts with ``line N:``. A line describes a whole
case: a key left out takes its default (``expectations: {}``, ``status: active``...),
except ``source_trace_id``, which is never erased.

A line whose ``name`` is already a case of the dataset UPDATES that case (with a
revision, like an edit; an identical line changes nothing), so re-importing the file
kept in the repository brings the dataset in line with it. A case of the dataset that
the file does not mention is left as it is. Where a case came from cannot change: a
line naming another ``source_trace_id`` than the stored case, or a run that another
case of the dataset already came from, is a 409 naming the line.
"""

from dataclasses import dataclass, field

import orjson
from django.db import IntegrityError, transaction

from datasets.case_validation import CASE_CONTENT_FIELDS, CASE_DEFAULTS, CASE_FIELDS, case_fields_check
from datasets.cases import (
    actor_fields,
    case_changes,
    case_snapshot,
    change_action,
    revision_write,
    writable_dataset_check,
)
from datasets.models import CaseRevision, GoldenCase, Trace
from evalsite.errors import Conflict, Invalid
from evalsite.json_input import json_read, json_safe

MAX_ERRORS = 200
EXPORT_CHUNK = 1000
IN_CHUNK = 500


def cases_export_lines(*, dataset, status=None):
    """The dataset's cases (all statuses, or one) as JSONL lines (bytes), in id order, streamed."""
    cases = GoldenCase.objects.filter(dataset=dataset).order_by("id").values_list(*CASE_FIELDS)
    if status:
        cases = cases.filter(status=status)
    for values in cases.iterator(chunk_size=EXPORT_CHUNK):
        yield _line(dict(zip(CASE_FIELDS, values, strict=True)))


def _line(case):
    try:
        return orjson.dumps(case) + b"\n"
    except orjson.JSONEncodeError:  # a value stored before the input rules
        return orjson.dumps(json_safe(case)) + b"\n"


@dataclass
class ImportResult:
    created: list = field(default_factory=list)
    updated: list = field(default_factory=list)
    unchanged: list = field(default_factory=list)

    def as_dict(self):
        rows = [(line, case, "created") for line, case in self.created]
        rows += [(line, case, "updated") for line, case in self.updated]
        rows += [(line, case, "unchanged") for line, case in self.unchanged]
        rows.sort(key=lambda row: row[0])
        return {
            "created": len(self.created),
            "updated": len(self.updated),
            "unchanged": len(self.unchanged),
            "cases": [
                {"line": line, "id": case.pk, "name": case.name, "version": case.version, "status": status}
                for line, case, status in rows
            ],
        }


def cases_import(*, dataset, body, by):
    """Import JSONL ``body`` (bytes) into ``dataset``; returns an ``ImportResult``.

    Raises ``Invalid`` (a bad or empty file) or ``Conflict`` (a line disagrees with where
    a stored case came from), writing nothing. Existing cases are locked while they are
    compared and updated.
    """
    lines = _lines_parse(body)
    writable_dataset_check(dataset)
    for attempt in range(2):
        try:
            with transaction.atomic():
                return _lines_write(dataset, lines, by)
        except IntegrityError:
            # A concurrent write took a name or a run between our read and our insert.
            if attempt:
                raise Conflict("Another request wrote cases of this dataset at the same time; retry.") from None
    raise AssertionError("unreachable")


def _error(line, field, message):
    return {"line": line, "field": field, "message": f"line {line}: {message}"}


def _lines_parse(body):
    """``[(line_number, fields)]`` of the non-blank lines; ``Invalid`` listing every bad one."""
    if isinstance(body, str):
        body = body.encode()
    errors = []
    parsed = []
    names = {}
    sources = {}
    for number, raw in enumerate(body.split(b"\n"), start=1):
        if len(errors) >= MAX_ERRORS:
            break
        if not raw.strip():
            continue
        try:
            value = json_read(raw, where="line")
        except Invalid as exc:
            problem = exc.errors[0]
            field = None if problem["field"] == "line" else problem["field"]
            errors.append(_error(number, field, f"{field or 'the line'} {problem['message']}"))
            continue
        if not isinstance(value, dict):
            errors.append(_error(number, None, "must be a JSON object (one case per line)"))
            continue
        clean, problems = case_fields_check(value)
        errors.extend(_error(number, p["field"], f"{p['field']} {p['message']}") for p in problems)
        if problems:
            continue
        name = clean["name"]
        if name in names:
            errors.append(_error(number, "name", f"name {name!r} is also on line {names[name]}"))
            continue
        names[name] = number
        source = clean.get("source_trace_id")
        if source is not None:
            if source in sources:
                errors.append(
                    _error(number, "source_trace_id", f"run {source!r} is also the source on line {sources[source]}")
                )
                continue
            sources[source] = number
        parsed.append((number, clean))
    if not errors and not parsed:
        errors.append({"line": None, "field": None, "message": "the file has no cases (one JSON object per line)"})
    if errors:
        raise Invalid("The file has invalid lines; nothing was imported.", errors=errors[:MAX_ERRORS])
    return parsed


def _lines_write(dataset, lines, by):
    names = [fields["name"] for _, fields in lines]
    # The existing cases named in the file are locked (with their dataset's row, which
    # also queues concurrent imports into the same dataset) while they are compared.
    cases = GoldenCase.objects.select_for_update().filter(dataset=dataset).select_related("dataset")
    existing = {c.name: c for chunk in _chunks(names) for c in cases.filter(name__in=chunk)}
    sources = [f["source_trace_id"] for _, f in lines if f.get("source_trace_id") is not None]
    source_owner = {}
    for chunk in _chunks(sources):
        source_owner.update(
            GoldenCase.objects.filter(dataset=dataset, source_trace_id__in=chunk).values_list("source_trace_id", "name")
        )
    errors = []
    for number, fields in lines:
        source = fields.get("source_trace_id")
        case = existing.get(fields["name"])
        if case is not None and source is not None and case.source_trace_id not in (None, source):
            errors.append(
                _error(
                    number,
                    "source_trace_id",
                    f"case {case.name!r} came from run {case.source_trace_id!r}; where a case came from cannot change",
                )
            )
        elif source is not None and source_owner.get(source, fields["name"]) != fields["name"]:
            errors.append(
                _error(
                    number, "source_trace_id", f"run {source!r} is already the source of case {source_owner[source]!r}"
                )
            )
    if errors:
        raise Conflict("Some lines disagree with the stored cases; nothing was imported.", errors=errors[:MAX_ERRORS])

    runs = {}
    for chunk in _chunks(sources):
        runs.update(
            Trace.objects.filter(project_id=dataset.project_id, trace_id__in=chunk).values_list("trace_id", "id")
        )
    result = ImportResult()
    to_create = []
    for number, fields in lines:
        case = existing.get(fields["name"])
        if case is None:
            to_create.append((number, fields))
            continue
        _case_overwrite(case, number, fields, runs, by, result)
    _cases_create(dataset, to_create, runs, by, result)
    return result


def _chunks(values, size=IN_CHUNK):
    # SQLite caps the parameters of one statement; a large file is looked up in slices.
    for start in range(0, len(values), size):
        yield values[start : start + size]


def _case_overwrite(case, number, fields, runs, by, result):
    # The line is the whole case: a key it leaves out goes back to its default.
    wanted = {key: fields[key] if key in fields else CASE_DEFAULTS[key] for key in CASE_CONTENT_FIELDS if key != "name"}
    old, new = case_changes(case, wanted)
    source = fields.get("source_trace_id")
    if source is not None and case.source_trace_id is None:
        old["source_trace_id"], new["source_trace_id"] = None, source
    if not new:
        result.unchanged.append((number, case))
        return
    action = change_action(case.status, new.get("status", case.status))
    for key, value in new.items():
        setattr(case, key, value)
    update_fields = [*new, "version", "updated_at"]
    if "source_trace_id" in new:
        case.source_run_id = runs.get(source)
        update_fields.append("source_run")
    case.version += 1
    case.save(update_fields=update_fields)
    revision_write(case=case, action=action, old=old, new=new, by=by)
    result.updated.append((number, case))


def _cases_create(dataset, lines, runs, by, result):
    if not lines:
        return
    cases = [
        GoldenCase(
            dataset=dataset,
            version=1,
            source_run_id=runs.get(fields.get("source_trace_id")),
            **{**CASE_DEFAULTS, **fields},
        )
        for _, fields in lines
    ]
    # Both PostgreSQL and SQLite (3.35+) return the new primary keys from a bulk insert.
    GoldenCase.objects.bulk_create(cases, batch_size=500)
    CaseRevision.objects.bulk_create(
        [
            CaseRevision(
                case=case, version=1, action=CaseRevision.Action.CREATED, new=case_snapshot(case), **actor_fields(by)
            )
            for case in cases
        ],
        batch_size=500,
    )
    result.created.extend((number, case) for (number, _), case in zip(lines, cases, strict=True))
