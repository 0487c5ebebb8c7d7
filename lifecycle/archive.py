"""A whole project as one zip of JSONL files, and back: moving or backing up needs no SQL.

The archive holds ``manifest.json`` (format, version, the project's settings, counts)
and one JSONL file per kind, in the order an import needs them:

- ``datasets.jsonl``: name, description, archived, and the gate policy (floor, rules,
  baseline experiment by name);
- ``experiments.jsonl``: name, dataset name, metadata;
- ``cases.jsonl``: each case as ``GET .../export?format=jsonl`` writes it, plus its
  dataset's name;
- ``runs.jsonl``: each run as ``POST /v1/api/traces`` takes it (spans included), so an
  import goes through the same validation as ingestion;
- ``scores.jsonl``: scores (built-in, judge and human labels) by the run's ``trace_id``;
  ``stale`` marks a score computed on an older revision of its run.

``project_import`` writes a new project in one transaction: every line is checked, and
any problem (``Invalid`` naming the file and line) leaves nothing written. Members are
streamed within size and ratio limits (``archive_members``): a zip bomb is refused
before it fills the memory. Not carried:
members, keys, the judge's configuration (its api_key is a secret), passes, gate runs,
abstentions, label configs and queue items: the gate and passes are recomputed.
"""

import io
import zipfile
import zlib
from decimal import Decimal

import orjson
from django.db import transaction

from datasets.ingestion import traces_ingest
from datasets.jsonl import cases_export_lines, cases_import
from datasets.models import Dataset, Experiment, GoldenCase, Span, Trace
from evalsite.errors import Conflict, Invalid
from evalsite.json_input import json_read
from evalsite.models import Project
from evalsite.projects import project_create
from evalsite.team import MAX_QUOTA_PER_MINUTE, MAX_RETENTION_DAYS
from gating.models import GatePolicy
from gating.policy_fields import POLICY_VALUE_FIELDS as POLICY_FIELDS
from lifecycle.archive_members import ArchiveMembers
from scoring.models import Score
from scoring.score_configs import score_configs_store, scores_with_config

FORMAT = "evalsite-project"
VERSION = 1
SPAN_FIELDS = ("input", "output", "status", "error", "latency_ms", "model", "usage", "attributes")
SCORE_FIELDS = ("scorer", "scorer_version", "config_hash", "config", "value", "passed", "reason", "detail", "source")
RUN_BATCH = 500
SCORE_BATCH = 2000


def _line(value):
    return orjson.dumps(value, default=_plain) + b"\n"


def _plain(value):
    if isinstance(value, Decimal):
        return float(value)
    raise TypeError


# --- export -----------------------------------------------------------------------------


def project_export(project):
    """The archive's bytes (small projects and tests; a worker writes a file: ``project_export_write``)."""
    buffer = io.BytesIO()
    project_export_write(project, buffer)
    return buffer.getvalue()


def project_export_write(project, out, progress=None):
    """Write the archive to the binary file ``out``, streaming; returns the counts per kind.

    ``progress(kind, written)`` is called every ``RUN_BATCH`` runs and every 2,000
    scores (``kind`` ``"runs"`` or ``"scores"``) and once at the end of each.
    """
    counts = {}
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, lines in (
            ("datasets.jsonl", _datasets_lines(project)),
            ("experiments.jsonl", _experiments_lines(project)),
            ("cases.jsonl", _cases_lines(project)),
            ("runs.jsonl", _runs_lines(project)),
            ("scores.jsonl", _scores_lines(project)),
        ):
            kind = name.removesuffix(".jsonl")
            with archive.open(name, "w", force_zip64=True) as member:
                counts[kind] = _member_write(member, lines, kind, progress)
        manifest = {
            "format": FORMAT, "version": VERSION, "counts": counts,
            "project": {"slug": project.slug, "name": project.name, "quota_per_minute": project.quota_per_minute,
                        "retention_days": project.retention_days},
        }  # fmt: skip
        archive.writestr("manifest.json", orjson.dumps(manifest, option=orjson.OPT_INDENT_2))
    return counts


def _member_write(member, lines, kind, progress):
    every = RUN_BATCH if kind == "runs" else SCORE_BATCH
    written = 0
    for line in lines:
        member.write(line)
        written += 1
        if progress and written % every == 0:
            progress(kind, written)
    if progress and kind in ("runs", "scores"):
        progress(kind, written)
    return written


def _datasets_lines(project):
    for dataset in Dataset.objects.filter(project=project).order_by("id"):
        policy = GatePolicy.objects.filter(dataset=dataset).select_related("baseline").first()
        row = {"name": dataset.name, "description": dataset.description, "archived": dataset.archived}
        if policy is not None:
            row["gate_policy"] = {f: getattr(policy, f) for f in POLICY_FIELDS}
            row["gate_policy"]["baseline"] = policy.baseline.name if policy.baseline else None
        yield _line(row)


def _experiments_lines(project):
    for e in Experiment.objects.filter(project=project).select_related("dataset").order_by("id"):
        yield _line({"name": e.name, "dataset": e.dataset.name if e.dataset else None, "metadata": e.metadata})


def _cases_lines(project):
    for dataset in Dataset.objects.filter(project=project).order_by("id"):
        for line in cases_export_lines(dataset=dataset):
            yield _line({"dataset": dataset.name, **orjson.loads(line)})


def _runs_lines(project):
    """Every run with its spans, ``RUN_BATCH`` at a time by id (no OFFSET: each batch costs the same)."""
    traces = Trace.objects.filter(project=project).select_related("experiment", "case__dataset").order_by("id")
    last = 0
    while batch := list(traces.filter(id__gt=last)[:RUN_BATCH]):
        last = batch[-1].pk
        spans = {}
        for span in Span.objects.filter(trace__in=batch).order_by("trace_id", "position", "id"):
            spans.setdefault(span.trace_id, []).append(_span_payload(span))
        for trace in batch:
            yield _line(_run_payload(trace, spans.get(trace.pk, [])))


def _run_payload(trace, spans):
    run = {
        "trace_id": trace.trace_id, "name": trace.name, "input": trace.input, "output": trace.output,
        "status": trace.status, "error": trace.error, "started_at": trace.started_at.isoformat(),
        "ended_at": trace.ended_at.isoformat() if trace.ended_at else None, "latency_ms": trace.latency_ms,
        "cost_cents": trace.cost_cents, "metadata": trace.metadata, "tags": trace.tags, "trial": trace.trial,
        "session_id": trace.session_id, "user_id": trace.user_id, "conversation_id": trace.conversation_id,
        "spans": spans,
    }  # fmt: skip
    if trace.experiment:
        run["experiment"] = trace.experiment.name
    if trace.case:
        run["dataset"], run["case"] = trace.case.dataset.name, trace.case.name
    return {key: value for key, value in run.items() if value is not None}


def _span_payload(span):
    payload = {"span_id": span.span_id, "parent_id": span.parent_span_id, "kind": span.kind, "name": span.name}
    payload.update({f: getattr(span, f) for f in SPAN_FIELDS})
    payload["cost_cents"] = span.cost_cents
    payload["started_at"] = span.started_at.isoformat() if span.started_at else None
    payload["ended_at"] = span.ended_at.isoformat() if span.ended_at else None
    return {key: value for key, value in payload.items() if value is not None}


def _scores_lines(project):
    scores = scores_with_config(Score.objects.filter(project=project)).select_related("trace").order_by("id")
    for score in scores.iterator(chunk_size=SCORE_BATCH):
        row = {"trace_id": score.trace.trace_id, **{f: getattr(score, f) for f in SCORE_FIELDS}}
        row["stale"] = score.run_revision < score.trace.revision
        yield _line(row)


# --- import -----------------------------------------------------------------------------


def _bad(where, message):
    return Invalid(f"{where}: {message}", errors=[{"field": where, "message": message}])


def _archive_read(data):
    """``(ArchiveMembers, manifest)``: every member is read within the limits of ``archive_members``."""
    try:
        archive = ArchiveMembers(zipfile.ZipFile(io.BytesIO(data)))
        manifest = orjson.loads(archive.read("manifest.json"))
    except (zipfile.BadZipFile, zlib.error, KeyError, orjson.JSONDecodeError):
        raise _bad("archive", "is not an evalsite project archive (a zip with manifest.json).") from None
    if not isinstance(manifest, dict) or (manifest.get("format"), manifest.get("version")) != (FORMAT, VERSION):
        raise _bad("manifest.json", f"must say format {FORMAT!r} version {VERSION}.")
    return archive, manifest


def _jsonl(archive, name):
    try:
        body = archive.read(name)
    except (zipfile.BadZipFile, zlib.error):
        raise _bad(name, "cannot be read from the archive (a broken zip).") from None
    except KeyError:
        raise _bad(name, "is missing from the archive.") from None
    rows = []
    for number, raw in enumerate(body.splitlines(), start=1):
        if raw.strip():
            try:
                # The rules of every JSON body (duplicate keys, NUL, 64-bit numbers, depth, UTF-8).
                row = json_read(raw, where="line")
            except Invalid as exc:
                problem = exc.errors[0]
                raise _bad(f"{name}:{number}", f"{problem['field']} {problem['message']}.") from None
            if not isinstance(row, dict):
                raise _bad(f"{name}:{number}", "must be a JSON object.")
            rows.append((number, row))
    return rows


def project_import(*, data, slug=None, name=None):
    """Create a project from an archive's bytes; returns it. All or nothing.

    ``slug``/``name`` override the archived ones (import beside the original). Raises
    ``Invalid`` naming the file and line of the first problem, ``Conflict`` when the
    slug is taken.
    """
    archive, manifest = _archive_read(data)
    settings = manifest.get("project") or {}
    with transaction.atomic():
        project = project_create(slug=slug or settings.get("slug", ""), name=name or settings.get("name", ""))
        datasets = _datasets_create(project, _jsonl(archive, "datasets.jsonl"))
        experiments = _experiments_create(project, datasets, _jsonl(archive, "experiments.jsonl"))
        _cases_create(datasets, _jsonl(archive, "cases.jsonl"))
        _runs_ingest(project, _jsonl(archive, "runs.jsonl"))
        _sources_link(project)
        _scores_create(project, _jsonl(archive, "scores.jsonl"))
        _policies_create(datasets, experiments, _jsonl(archive, "datasets.jsonl"))
        Project.objects.filter(pk=project.pk).update(**_settings_checked(settings))
    project.refresh_from_db()
    return project


def _settings_checked(settings):
    """The archived quota and retention, by the rules the settings page keeps; ``Invalid`` otherwise."""
    quota, days = settings.get("quota_per_minute") or 0, settings.get("retention_days")
    if type(quota) is not int or not 0 <= quota <= MAX_QUOTA_PER_MINUTE:
        raise _bad(
            "manifest.json", f"project.quota_per_minute must be a whole number from 0 to {MAX_QUOTA_PER_MINUTE}."
        )
    if days is not None and (type(days) is not int or not 1 <= days <= MAX_RETENTION_DAYS):
        raise _bad(
            "manifest.json", f"project.retention_days must be null or a whole number from 1 to {MAX_RETENTION_DAYS}."
        )
    return {"quota_per_minute": quota, "retention_days": days}


def _datasets_create(project, rows):
    datasets = {}
    for number, row in rows:
        if not isinstance(row.get("name"), str) or not row["name"] or row["name"] in datasets:
            raise _bad(f"datasets.jsonl:{number}", "needs a unique, non-empty name.")
        datasets[row["name"]] = Dataset.objects.create(
            project=project, name=row["name"], description=row.get("description") or "",
            archived=bool(row.get("archived")),
        )  # fmt: skip
    return datasets


def _experiments_create(project, datasets, rows):
    experiments = {}
    for number, row in rows:
        if not isinstance(row.get("name"), str) or not row["name"] or row["name"] in experiments:
            raise _bad(f"experiments.jsonl:{number}", "needs a unique, non-empty name.")
        if row.get("dataset") is not None and row["dataset"] not in datasets:
            raise _bad(f"experiments.jsonl:{number}", f"names dataset {row['dataset']!r}, not in datasets.jsonl.")
        experiments[row["name"]] = Experiment.objects.create(
            project=project, name=row["name"], dataset=datasets.get(row.get("dataset")),
            metadata=row.get("metadata") or {},
        )  # fmt: skip
    return experiments


def _cases_create(datasets, rows):
    by_dataset = {}
    for number, row in rows:
        dataset = row.pop("dataset", None)
        if dataset not in datasets:
            raise _bad(f"cases.jsonl:{number}", f"names dataset {dataset!r}, not in datasets.jsonl.")
        by_dataset.setdefault(dataset, []).append(_line(row))
    for dataset, lines in by_dataset.items():
        archived = datasets[dataset].archived
        Dataset.objects.filter(pk=datasets[dataset].pk).update(archived=False)  # cases_import writes open datasets
        datasets[dataset].archived = False
        try:
            cases_import(dataset=datasets[dataset], body=b"".join(lines), by=None)
        except (Invalid, Conflict) as exc:
            raise _bad(f"cases.jsonl (dataset {dataset!r})", exc.detail) from None
        Dataset.objects.filter(pk=datasets[dataset].pk).update(archived=archived)


def _runs_ingest(project, rows):
    for start in range(0, len(rows), RUN_BATCH):
        batch = rows[start : start + RUN_BATCH]
        try:
            traces_ingest(project=project, payload={"traces": [row for _, row in batch]})
        except Invalid as exc:
            first = exc.errors[0] if exc.errors else {"field": "", "message": exc.detail}
            index = first["field"].split("]", 1)[0].removeprefix("traces[")
            number = batch[int(index)][0] if index.isdigit() else batch[0][0]
            raise _bad(f"runs.jsonl:{number}", f"{first['field']}: {first['message']}") from None


def _sources_link(project):
    runs = dict(Trace.objects.filter(project=project).values_list("trace_id", "pk"))
    for case in GoldenCase.objects.filter(dataset__project=project, source_trace_id__isnull=False, source_run=None):
        if case.source_trace_id in runs:
            GoldenCase.objects.filter(pk=case.pk).update(source_run_id=runs[case.source_trace_id])


def _scores_create(project, rows):
    runs = {
        t[0]: t[1:]
        for t in Trace.objects.filter(project=project).values_list(
            "trace_id", "pk", "experiment_id", "case_id", "revision"
        )
    }
    scores, configs = [], {}
    for number, row in rows:
        if row.get("trace_id") not in runs:
            raise _bad(f"scores.jsonl:{number}", f"names run {row.get('trace_id')!r}, not in runs.jsonl.")
        pk, experiment_id, case_id, revision = runs[row["trace_id"]]
        try:
            fields = {f: row[f] for f in SCORE_FIELDS}
        except KeyError as exc:
            raise _bad(f"scores.jsonl:{number}", f"lacks the field {exc.args[0]!r}.") from None
        configs.setdefault(str(fields["config_hash"]), orjson.dumps(fields.pop("config")).decode())
        scores.append(Score(
            project=project, trace_id=pk, experiment_id=experiment_id, case_id=case_id,
            run_revision=0 if row.get("stale") else revision, **fields,
        ))  # fmt: skip
    score_configs_store(project_id=project.pk, configs=configs)
    Score.objects.bulk_create(scores, batch_size=1000)


def _policies_create(datasets, experiments, rows):
    for number, row in rows:
        policy = row.get("gate_policy")
        if not isinstance(policy, dict):
            continue
        baseline = policy.get("baseline")
        if baseline is not None and baseline not in experiments:
            raise _bad(f"datasets.jsonl:{number}", f"gate_policy.baseline {baseline!r} is not in experiments.jsonl.")
        GatePolicy.objects.create(
            dataset=datasets[row["name"]], baseline=experiments.get(baseline),
            **{f: policy[f] for f in POLICY_FIELDS if f in policy},
        )  # fmt: skip
