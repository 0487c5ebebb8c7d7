"""Write a batch of outcomes: scores, abstentions and skips, exactly once, within the quota.

``outcomes_write`` runs inside the caller's transaction and, in this order:

1. locks the batch's runs (``SELECT ... FOR NO KEY UPDATE``, by primary key). Every
   writer of scores goes through here, so two passes over the same runs take turns
   on them and each sees what the other wrote (on SQLite the IMMEDIATE transaction
   already holds the database's write lock). Runs deleted since they were loaded are
   dropped. The same statement reads each run's ``revision`` as locked.
2. compares each run's ``revision`` with the one it was scored on: a run that changed
   meanwhile (OpenTelemetry spans arrived: that ingestion locks the run too, and bumps
   its revision) is not written from old data; its outcomes become ``run_changed``
   skips, and the next pass scores it again.
3. reads what is already decided for these runs: a stored score computed on the run's
   current revision (left alone, counted ``existing`` unless this pass wrote it on an
   earlier attempt), or an abstention this pass already recorded. A stale score (an
   older revision) counts as missing: the new score replaces it (same unique key, one
   row), and so does an abstention computed in its place.
4. reserves quota for the scores left (``quota_reserve(partial=True)``, after the run
   locks, so lock order is always runs then quota window). Scores beyond the grant are
   not written: each becomes a ``quota`` skip, and a stale score it would have
   replaced stays.
5. stores the configs the scores name, once per project and hash
   (``scoring.score_configs``; unless the caller has stored them already, as a pass
   does before it hands the batch over), then writes scores with ``rows_insert_new``: on
   PostgreSQL a ``COPY`` straight into the table, since step 3 under the locks of step
   1 left out every stored score (a conflict all the same falls back to a staging
   table and ``INSERT ... ON CONFLICT DO NOTHING``); abstentions/skips through the
   staging table (unique per pass, run, scorer, version and config). A small write
   merges its scores into the current summaries of their experiments rather than
   dropping them (``scoring.pipeline.summary_upkeep``).

A dry run does steps 2-4 without locking, reserving or writing, reading the quota left.
"""

import logging
from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal

import orjson
from django.db import connection, transaction
from django.utils import timezone

from datasets.models import Trace
from evalsite.bulk import datetime_adapter, rows_insert_new, rows_lock, rows_select_by_ids
from evalsite.metrics import ABSTENTIONS, SCORES_WRITTEN, counted_on_commit
from evalsite.quota import quota_remaining, quota_reserve
from scoring.models import Abstention, AbstentionKind, Score
from scoring.pipeline.summary_upkeep import summaries_extend, summaries_open
from scoring.score_configs import score_configs_store

SCORE_COLUMNS = (
    "project_id", "trace_id", "scorer", "scorer_version", "config_hash", "value", "passed", "reason", "detail",
    "source", "experiment_id", "case_id", "scoring_pass_id", "run_revision", "created_at",
)  # fmt: skip
ABSTENTION_COLUMNS = (
    "project_id", "trace_id", "scorer", "scorer_version", "config_hash", "kind", "reason", "detail",
    "experiment_id", "case_id", "scoring_pass_id", "created_at",
)  # fmt: skip
logger = logging.getLogger(__name__)

# The unique constraints new rows are checked against (see the models).
SCORE_KEY = ("trace_id", "scorer", "scorer_version", "config_hash")
ABSTENTION_KEY = ("scoring_pass_id", "trace_id", "scorer", "scorer_version", "config_hash")


@dataclass
class WriteReport:
    written: list = field(default_factory=list)  # outcomes written as scores
    recorded: list = field(default_factory=list)  # outcomes recorded as abstentions or skips
    existing: int = 0  # outcomes already decided when the batch was written, left alone


def keys_decided(*, trace_pks, scorer_ids, pass_id=None, with_abstentions=True):
    """What is already decided for these runs: ``(decided, stale)`` (see ``_keys_read``)."""
    decided, stale, _ = _keys_read(
        trace_pks=trace_pks, scorer_ids=scorer_ids, pass_id=pass_id, with_abstentions=with_abstentions
    )
    return decided, stale


def _keys_read(*, trace_pks, scorer_ids, pass_id=None, with_abstentions=True):
    """What is already decided for these runs: ``(decided, stale, stored)``.

    ``decided`` maps the (trace pk, scorer, version, config hash) keys of stored scores
    computed on the run's current revision, and of abstentions recorded by pass ``pass_id`` (unless
    ``with_abstentions`` is false), to whether they count as ``existing``: True when
    stored before this pass, False when this pass itself wrote them (on an earlier
    attempt at the same chunk, already counted). ``stale`` maps the keys of scores
    computed on an older revision of their run to their row ids. ``stored`` is the set
    of the keys of fresh scores (what a summary counts).
    """
    decided, stale, stored = {}, {}, set()
    if not trace_pks or not scorer_ids:
        return decided, stale, stored
    q = connection.ops.quote_name
    # All of each run's scores (one range of the unique index per run), filtered here:
    # an IN list on the scorer would make it one index descent per run and scorer.
    rows, c = rows_select_by_ids(
        f"SELECT s.id, s.trace_id, s.scorer, s.scorer_version, s.config_hash, s.run_revision < t.revision AS stale, "
        f"s.scoring_pass_id FROM {q(Score._meta.db_table)} s JOIN {q(Trace._meta.db_table)} t ON t.id = s.trace_id "
        f"WHERE s.trace_id {{ids}}",
        trace_pks,
        positions=True,
    )
    wanted = set(scorer_ids)
    if rows:  # many rows: the driver's tuples, each column at its position taken by name
        pk, trace, scorer, version, digest, is_stale, written_by = (
            c.id, c.trace_id, c.scorer, c.scorer_version, c.config_hash, c.stale, c.scoring_pass_id,
        )  # fmt: skip
    for row in rows:
        if row[scorer] not in wanted:
            continue
        key = (row[trace], row[scorer], row[version], row[digest])
        if row[is_stale]:
            stale[key] = row[pk]
        else:
            decided[key] = pass_id is None or row[written_by] != pass_id
            stored.add(key)
    if pass_id is not None and with_abstentions:
        for row in rows_select_by_ids(
            f"SELECT trace_id, scorer, scorer_version, config_hash FROM {q(Abstention._meta.db_table)} "
            f"WHERE trace_id {{ids}} AND scoring_pass_id = %s",
            trace_pks,
            [pass_id],
        ):
            decided[(row.trace_id, row.scorer, row.scorer_version, row.config_hash)] = False
    return decided, stale, stored


def outcomes_write(*, project, pass_id, runs, outcomes, dry_run=False, now=None, retried=True, configs_stored=False):
    """Write ``outcomes`` of ``runs`` (see the module docstring); returns a ``WriteReport``.

    ``retried=False`` says the pass has recorded nothing for these runs yet (a chunk's
    first attempt): its abstentions are not read back (the insert still skips any).
    ``configs_stored=True`` says the configs of ``outcomes`` are stored already
    (``outcome_configs_store``, committed: a config is named by its hash, so one stored
    without its scores is harmless).

    Must run inside a transaction (the quota reservation and the rows commit or roll
    back together). Idempotent: outcomes already written or recorded are counted
    ``existing`` and not written again.
    """
    if not dry_run and not transaction.get_connection().in_atomic_block:
        raise RuntimeError("outcomes_write must run inside the transaction that writes the batch")
    now = now or timezone.now()
    report = WriteReport()
    if not outcomes:
        return report
    pks = sorted({run.pk for run in runs})
    if dry_run:
        revisions = dict(Trace.objects.filter(pk__in=pks).values_list("pk", "revision"))
    else:
        # Read as locked: a run revised since it was loaded is not scored on what it was.
        revisions = {row.id: row.revision for row in rows_lock(Trace._meta.db_table, pks, columns=["revision"])}
    present = set(revisions)
    changed = {run.pk for run in runs if run.pk in present and revisions[run.pk] != run.revision}
    scorer_ids = sorted({o.scorer_id for o in outcomes})
    decided, stale, stored = _keys_read(
        trace_pks=sorted(present), scorer_ids=scorer_ids, pass_id=pass_id, with_abstentions=retried
    )
    scores, others = _sort_out(outcomes, present, changed, decided, report)
    granted = _quota_grant(project, len(scores), dry_run, now)
    report.written = scores[:granted]
    over = scores[granted:]
    if over:
        message = f"over the project's quota of {project.quota_per_minute} records per minute; not written"
        others.extend(o.skipped_as("quota", message, quota_per_minute=project.quota_per_minute) for o in over)
    report.recorded = others
    if not dry_run:
        _rows_write(project, pass_id, report, stale, stored, now, retried, configs_stored)
        _counted(project, report)
    return report


def outcome_configs_store(project_id, outcomes):
    """Store the configs the scores among ``outcomes`` name (``scoring.score_configs``)."""
    score_configs_store(project_id=project_id, configs={o.config_hash: o.config_json for o in outcomes if o.is_score})


def _counted(project, report):
    for source, n in Counter(str(o.source) for o in report.written).items():
        counted_on_commit(SCORES_WRITTEN, n, project=project.slug, source=source)
    for (kind, reason), n in Counter((str(o.kind), o.result.reason[:50]) for o in report.recorded).items():
        counted_on_commit(ABSTENTIONS, n, project=project.slug, kind=kind, reason=reason)


def _sort_out(outcomes, present, changed, decided, report):
    """``(scores to write, abstentions and skips to record)``; already decided ones count as existing."""
    scores, others = [], []
    for outcome in outcomes:
        if outcome.run.pk not in present:
            continue
        counts = decided.get(outcome.key)
        if counts is not None:
            report.existing += counts
        elif outcome.run.pk in changed:
            others.append(
                outcome.skipped_as(
                    "run_changed", "the run changed while it was scored (a span arrived); score it again"
                )
            )
        elif outcome.is_score:
            scores.append(outcome)
        else:
            others.append(outcome)
    return scores, others


def _quota_grant(project, wanted, dry_run, now):
    if dry_run:
        remaining = quota_remaining(project=project, now=now)
        return wanted if remaining is None else min(wanted, remaining)
    return quota_reserve(project=project, count=wanted, partial=True, now=now)


def _rows_write(project, pass_id, report, stale, stored, now, retried, configs_stored):
    """Replace the stale scores the batch supersedes, then insert its scores (merged into the
    summaries of their experiments) and abstentions."""
    others = report.recorded
    replaced = [stale[o.key] for o in report.written if o.key in stale]
    replaced += [stale[o.key] for o in others if o.key in stale and o.kind == AbstentionKind.ABSTAINED]
    if replaced:
        Score.objects.filter(pk__in=replaced).delete()
    stamp = datetime_adapter()(now)
    project_id = project.pk
    if not configs_stored:
        outcome_configs_store(project_id, report.written)
    opened = summaries_open(report.written)
    inserted = rows_insert_new(
        Score._meta.db_table,
        SCORE_COLUMNS,
        [
            (
                project_id, o.run.pk, o.scorer_id, o.version, o.config_hash, o.result.value, o.result.passed,
                o.result.reason, _dumps(o.result.detail), o.source, o.run.experiment_id, o.run.case_id, pass_id,
                o.run.revision, stamp,
            )
            for o in report.written
        ],
        unique=SCORE_KEY,
        # The run locks and keys_decided above left out every score already stored.
        expect_new=True,
    )  # fmt: skip
    complete = inserted == len(report.written)
    summaries_extend(opened, report.written, stored, complete=complete)
    if not complete:
        # Only a writer that bypassed the run locks above can get here first.
        logger.warning(
            "pass %s: %d of %d scores were already stored", pass_id, len(report.written) - inserted, len(report.written)
        )
    rows_insert_new(
        Abstention._meta.db_table,
        ABSTENTION_COLUMNS,
        [
            (
                project_id, o.run.pk, o.scorer_id, o.version, o.config_hash, o.kind, o.result.reason[:50],
                _dumps(o.result.detail), o.run.experiment_id, o.run.case_id, pass_id, stamp,
            )
            for o in others
        ],
        unique=ABSTENTION_KEY,
        # A first attempt at these runs has recorded nothing for this pass yet.
        expect_new=not retried,
    )  # fmt: skip


def _default(value):
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, set | frozenset):
        return sorted(value, key=str)
    return str(value)


def _dumps(detail):
    return orjson.dumps(detail if detail is not None else {}, default=_default, option=orjson.OPT_NON_STR_KEYS).decode()
