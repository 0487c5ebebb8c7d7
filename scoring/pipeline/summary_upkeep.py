"""Experiments' score summaries kept current as the writer adds scores (PostgreSQL).

A summary (``scoring.passes.summaries``) holds an experiment's per-scorer figures and
per-case verdicts for compare. Any statement that changes its experiment's scores drops
it (the triggers of ``scoring/migrations/0008_score_summaries.py``), and building it
again reads every score: over a million, seconds. The writer instead merges what it
adds, in the transaction that adds it (``scoring.pipeline.writer``), when the write
is small (``KEPT_UP_TO``; a larger one drops the summary as before):

1. ``summaries_open``, before the scores are copied: takes the shared advisory lock of
   each experiment of the batch, as the triggers do, so that no build runs until the
   batch commits; finds the experiments whose summary is current; starts an empty one
   for an experiment with no score at all (under the exclusive lock, when no other
   writer holds the shared one); and tells the insert trigger to leave these summaries
   standing for the copy that follows (``evalsite.summary_upkeep``, local to the
   transaction).
2. the writer copies the scores in;
3. ``summaries_extend`` merges the batch into each summary it found: per case, each
   scorer's verdict (every fresh score passed) with its newest run, merged in SQL by
   ``scoring_summary_case_merged`` on the row it updates; per scorer and version, the
   count, sum and sum of squares, the lowest and highest config hash, whether a run
   has several configs, and per config for the pairs where one does. Whether a run has
   several comes from what the writer read under its run locks: every fresh score of
   the batch's runs. A merge that cannot be done exactly (a scorer whose earlier runs
   had different configs, the per-case kind, and a run of this batch has two) drops
   the summary instead, and the pass that ends builds it again.

The rows a summary had kept stay right: a summary that is current was built from every
fresh score, or started empty before the first, and every later score came through
here or dropped it. A summary dropped by another writer meanwhile is not written
(nothing rebuilds it while this batch holds its shared lock). Everything else still
drops the summary: a delete, an update, a stale score replaced, a run revised, an
insert by anything but the writer. SQLite keeps no summaries: nothing to do.
"""

import json
from collections import defaultdict

import orjson
from django.db import connection

from evalsite.sql import rows_named
from evalsite.vendor import is_postgresql
from scoring.labels import LABEL_PREFIX

LOCK_CLASS = 2037001  # the advisory lock space of summaries (the migration's triggers use it)
# The largest write whose scores are merged (a gate's, a score request's, online scoring's,
# a judge's answer, a small pass's batch). Merging costs about 8 to 12 µs a score against
# 1 to 4 µs a score for a build (which reads them all): a pass's batches of 10,000 scores drop the
# summary as before, and the pass that ends builds it once; a gate of fifty cases written
# into an experiment of a million scores keeps its summary instead of costing a build.
KEPT_UP_TO = 1000
EMPTY_STATS = {"pairs": [], "several": [], "configs": []}

# One row a case: [case id, [passing scorers], [their runs], [failing scorers], [their runs]],
# in case order (the order rows are locked in), scorers in byte order (as a build sorts them).
CASES_MERGE = """
INSERT INTO scoring_score_summary_case AS c (experiment_id, case_id, passing, passing_runs, failing, failing_runs)
SELECT %(experiment)s, (v ->> 0)::bigint,
       ARRAY(SELECT json_array_elements_text(v -> 1))::varchar[],
       ARRAY(SELECT json_array_elements_text(v -> 2))::bigint[],
       ARRAY(SELECT json_array_elements_text(v -> 3))::varchar[],
       ARRAY(SELECT json_array_elements_text(v -> 4))::bigint[]
FROM json_array_elements(%(cases)s::json) AS v
ON CONFLICT (experiment_id, case_id) DO UPDATE SET (passing, passing_runs, failing, failing_runs) = (
    SELECT * FROM scoring_summary_case_merged(
        c.passing, c.passing_runs, c.failing, c.failing_runs,
        EXCLUDED.passing, EXCLUDED.passing_runs, EXCLUDED.failing, EXCLUDED.failing_runs))
"""


def summaries_open(written):
    """The experiments of the ``written`` outcomes whose summary they will extend.

    Call before the scores are inserted, then ``summaries_extend`` after them (see the
    module docstring). Empty for a write of more than ``KEPT_UP_TO`` scores, and on SQLite.
    """
    if len(written) > KEPT_UP_TO or not is_postgresql():
        return set()
    ids = sorted({o.run.experiment_id for o in written if o.run.experiment_id is not None})
    if not ids:
        return set()
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(pg_advisory_xact_lock_shared(%s, mod(e, 2147483647)::int)) AS locked "
            "FROM unnest(%s::bigint[]) AS e",
            [LOCK_CLASS, ids],
        )
        cursor.execute("SELECT experiment_id FROM scoring_score_summary WHERE experiment_id = ANY(%s)", [ids])
        current = {row.experiment_id for row in rows_named(cursor)}
        current |= {e for e in ids if e not in current and _started(cursor, e)}
        if current:
            cursor.execute("SELECT set_config('evalsite.summary_upkeep', 'on', true)")
    return current


def _started(cursor, experiment_id):
    """Start an empty summary for an experiment with no score yet, when no other writer holds it."""
    cursor.execute(
        "SELECT pg_try_advisory_xact_lock(%s, mod(%s, 2147483647)::int) AS locked", [LOCK_CLASS, experiment_id]
    )
    if not rows_named(cursor)[0].locked:
        return False
    cursor.execute("SELECT EXISTS (SELECT 1 FROM scoring_score WHERE experiment_id = %s) AS scored", [experiment_id])
    if rows_named(cursor)[0].scored:
        return False
    cursor.execute("DELETE FROM scoring_score_summary_case WHERE experiment_id = %s", [experiment_id])
    cursor.execute(
        "INSERT INTO scoring_score_summary (experiment_id, stats) VALUES (%s, %s::jsonb)",
        [experiment_id, json.dumps(EMPTY_STATS)],
    )
    return True


def summaries_extend(opened, written, stored, *, complete=True):
    """After the copy: merge the ``written`` outcomes into the ``opened`` summaries.

    ``stored``: the (run pk, scorer, version, config hash) keys of the fresh scores the
    batch's runs already had (what the writer read under its run locks). With
    ``complete`` false (not every score was inserted: some were already stored) the
    ``opened`` summaries are dropped instead.
    """
    if not opened:
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT set_config('evalsite.summary_upkeep', 'off', true)")
        if not complete:
            cursor.execute("SELECT scoring_summaries_drop(%s::bigint[])", [sorted(opened)])
            return
    by_experiment = defaultdict(list)
    for outcome in written:
        if outcome.run.experiment_id in opened:
            by_experiment[outcome.run.experiment_id].append(outcome)
    for experiment_id, outcomes in sorted(by_experiment.items()):
        _summary_extend(experiment_id, batch_read(outcomes, stored))


def _summary_extend(experiment_id, batch):
    with connection.cursor() as cursor:
        if batch["verdicts"]:
            cases = orjson.dumps(_case_rows(batch["verdicts"])).decode()
            cursor.execute(CASES_MERGE, {"experiment": experiment_id, "cases": cases})
        cursor.execute("SELECT stats FROM scoring_score_summary WHERE experiment_id = %s FOR UPDATE", [experiment_id])
        rows = rows_named(cursor)
        if not rows:  # dropped by another writer meanwhile: stays dropped
            return
        merged = stats_merged(stats_loaded(rows[0].stats), batch)
        if merged is None:
            cursor.execute("SELECT scoring_summaries_drop(ARRAY[%s]::bigint[])", [experiment_id])
        else:
            cursor.execute(
                "UPDATE scoring_score_summary SET stats = %s::jsonb WHERE experiment_id = %s",
                [json.dumps(merged), experiment_id],
            )


def _case_rows(verdicts):
    """The rows of ``CASES_MERGE`` from ``{(case, scorer): [passed, run]}``."""
    rows = []
    for (case_id, scorer), (passed, run) in sorted(verdicts.items()):
        if not rows or rows[-1][0] != case_id:
            rows.append([case_id, [], [], [], []])
        row = rows[-1]
        at = 1 if passed else 3
        row[at].append(scorer)
        row[at + 1].append(run)
    return rows


def batch_read(outcomes, stored):
    """What a batch of written outcomes adds to a summary.

    ``{"verdicts", "pairs", "configs", "several"}``: ``verdicts`` maps (case, scorer) to
    ``[every score passed, newest run]``; ``configs`` maps (scorer, version, config hash)
    to ``[n, sum, sum of squares]``, and ``pairs`` (scorer, version) to the same with the
    lowest and highest hash; ``several`` is the set of pairs with a run that now has
    fresh scores under two configs (reviewers' labels never count).
    """
    verdicts, configs, first, several = {}, {}, {}, set()
    for o in outcomes:
        run, result, scorer, version, digest = o.run, o.result, o.scorer_id, o.version, o.config_hash
        value = result.value
        figures = configs.get((scorer, version, digest))
        if figures is None:
            configs[(scorer, version, digest)] = [1, value, value * value]
        else:
            figures[0] += 1
            figures[1] += value
            figures[2] += value * value
        if first.setdefault((run.pk, scorer, version), digest) != digest:
            several.add((scorer, version))
        if run.case_id is not None:
            verdict = verdicts.get((run.case_id, scorer))
            if verdict is None:
                verdicts[(run.case_id, scorer)] = [bool(result.passed), run.pk]
            else:
                verdict[0] = verdict[0] and bool(result.passed)
                verdict[1] = max(verdict[1], run.pk)
    for run_pk, scorer, version, digest in stored:
        if first.get((run_pk, scorer, version), digest) != digest:
            several.add((scorer, version))
    pairs = {}
    for (scorer, version, digest), (n, total, total_sq) in configs.items():
        figures = pairs.get((scorer, version))
        if figures is None:
            pairs[(scorer, version)] = [n, total, total_sq, digest, digest]
        else:
            figures[:5] = [figures[0] + n, figures[1] + total, figures[2] + total_sq, min(figures[3], digest),
                           max(figures[4], digest)]  # fmt: skip
    several = {pair for pair in several if not pair[0].startswith(LABEL_PREFIX)}
    return {"verdicts": verdicts, "pairs": pairs, "configs": configs, "several": several}


def stats_merged(stats, batch):
    """``stats`` (a summary's, as ``experiment_stats`` gives them) with ``batch`` added; None
    when the per-config figures of a pair that now has several configs are not known."""
    pairs = {(r["scorer"], r["scorer_version"]): r for r in stats["pairs"]}
    several_before = {tuple(p) for p in stats["several"]}
    several = several_before | batch["several"]
    configs = {(r["scorer"], r["scorer_version"], r["config_hash"]): r for r in stats["configs"]}
    for pair in several - several_before:  # split by config from now on: what was there is one config, or unknown
        before = pairs.get(pair)
        if before is not None:
            if before["low_config"] != before["high_config"]:
                return None
            configs[(*pair, before["low_config"])] = {**_figures_only(before), "config_hash": before["low_config"]}
    for pair, figures in batch["pairs"].items():
        before = pairs.get(pair)
        low, high = figures[3:5] if before is None else (before["low_config"], before["high_config"])
        pairs[pair] = _added(before, figures, scorer=pair[0], scorer_version=pair[1])
        pairs[pair].update(low_config=min(low, figures[3]), high_config=max(high, figures[4]))
    for key, figures in batch["configs"].items():
        if key[:2] in several:
            configs[key] = _added(configs.get(key), figures, scorer=key[0], scorer_version=key[1], config_hash=key[2])
    return {
        "pairs": list(pairs.values()),
        "several": sorted(list(p) for p in several),
        "configs": list(configs.values()),
    }


def _added(row, figures, **names):
    n, total, total_sq = figures[:3]
    if row is not None:
        n, total, total_sq = row["n"] + n, row["sum"] + total, row["sum_sq"] + total_sq
        names = {**row, **names}
    return {**names, "n": n, "sum": total, "sum_sq": total_sq, "mean": total / n, "mean_sq": total_sq / n}


def _figures_only(row):
    return {k: row[k] for k in ("scorer", "scorer_version", "n", "sum", "sum_sq", "mean", "mean_sq")}


def stats_loaded(stats):
    """A summary's ``stats`` column as read (Django's cursor leaves jsonb as text)."""
    return json.loads(stats) if isinstance(stats, str) else stats
