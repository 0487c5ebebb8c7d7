"""Each experiment's score aggregates, built once and kept until its scores change.

Compare reads two kinds of figures from an experiment's fresh scores: per scorer (and
version, and config where a run has several) the count, mean and mean of squares; and
per (case, scorer) the verdict (every fresh score passed) with the newest run. Over
a million scores the grouping takes a second. A *summary* keeps both (PostgreSQL only,
``scoring/migrations/0008_score_summaries.py``):

- ``scoring_score_summary``: one row an experiment, its per-scorer figures (``stats``);
- ``scoring_score_summary_case``: one row a case, the scorers it passed and failed
  with each one's newest run, aligned arrays.

A summary counts only while its ``scoring_score_summary`` row exists, and nothing has
to remember to drop it: statement triggers delete that row in the same transaction as
any statement that inserts, updates, deletes or truncates scores of the experiment, or
bumps the revision of a run it scored (which makes scores stale); but the scoring
writer's small writes (a gate's, a score request's, online scoring's) merge into it
instead (``scoring.pipeline.summary_upkeep``), and start it empty with an experiment's
first score. Before deleting, the
trigger takes a shared advisory lock on the experiment; ``summary_build`` holds the
exclusive one while it reads the scores, so a write that commits during a build waits
for it and then drops what it built. A build never waits: when the lock is taken, the
caller computes from the scores. A pass builds its experiment's summary when it ends;
compare reads the scores when a summary is missing and asks a worker to build it.
"""

import json

from django.db import connection, transaction
from django.db.models import Avg, Count, F, Max, Min, Sum

from evalsite.sql import row_named, rows_named
from evalsite.vendor import is_postgresql
from scoring.freshness import fresh_sql, scores_fresh
from scoring.labels import LABEL_PREFIX
from scoring.models import Score
from scoring.pipeline.summary_upkeep import LOCK_CLASS, stats_loaded

# A build of this many cases refreshes the planner's statistics of the case table, which
# would otherwise still count them as absent (and pair two experiments by nested loop).
ANALYZED_FROM = 1000


def summaries_kept():
    """Whether this database keeps summaries (PostgreSQL)."""
    return is_postgresql()


def experiment_stats(experiment_id, scorers=None):
    """One experiment's per-scorer figures, computed from its fresh scores.

    ``{"pairs": [...], "several": [[scorer, version], ...], "configs": [...]}``:
    ``pairs`` one row per (scorer, version) with ``n``, ``mean``, ``mean_sq``, their
    ``sum`` and ``sum_sq`` (what a kept summary merges new scores into) and the lowest
    and highest config hash; ``several`` the pairs with a run scored under
    several configs; ``configs`` those pairs' rows per config hash.
    """
    scores = _fresh(experiment_id, scorers)
    pairs = list(
        scores.values("scorer", "scorer_version").annotate(
            n=Count("id"),
            mean=Avg("value"),
            mean_sq=Avg(F("value") * F("value")),
            sum=Sum("value"),
            sum_sq=Sum(F("value") * F("value")),
            low_config=Min("config_hash"),
            high_config=Max("config_hash"),
        )
    )
    several = _several_configs_per_run(scores, pairs)
    return {"pairs": pairs, "several": several, "configs": config_stats(experiment_id, several)}


def config_stats(experiment_id, pairs):
    """The figures per config hash of the (scorer, version) ``pairs`` of one experiment."""
    if not pairs:
        return []
    wanted = {tuple(pair) for pair in pairs}
    rows = (
        _fresh(experiment_id, {scorer for scorer, _ in wanted})
        .values("scorer", "scorer_version", "config_hash")
        .annotate(
            n=Count("id"),
            mean=Avg("value"),
            mean_sq=Avg(F("value") * F("value")),
            sum=Sum("value"),
            sum_sq=Sum(F("value") * F("value")),
        )
    )
    return [r for r in rows if (r["scorer"], r["scorer_version"]) in wanted]


def _fresh(experiment_id, scorers):
    scores = scores_fresh(Score.objects.filter(experiment_id=experiment_id))
    return scores.filter(scorer__in=scorers) if scorers else scores


def _several_configs_per_run(scores, pairs):
    """The [scorer, version] pairs with a run scored under several configs.

    A run has one score per config (a unique constraint), so only scorers whose config
    hashes differ can have one; counting distinct runs (a sort) is kept for those.
    Labels by several reviewers on one run pool into one row and are never split.
    """
    differ = {
        r["scorer"] for r in pairs if r["low_config"] != r["high_config"] and not r["scorer"].startswith(LABEL_PREFIX)
    }
    if not differ:
        return []
    counted = (
        scores.filter(scorer__in=differ)
        .values("scorer", "scorer_version")
        .annotate(n=Count("id"), runs=Count("trace_id", distinct=True))
    )
    return sorted([r["scorer"], r["scorer_version"]] for r in counted if r["n"] > r["runs"])


CASES_BUILD = f"""
INSERT INTO scoring_score_summary_case (experiment_id, case_id, passing, passing_runs, failing, failing_runs)
SELECT %(experiment)s, case_id,
       COALESCE(array_agg(scorer) FILTER (WHERE ok), '{{}}'),
       COALESCE(array_agg(run) FILTER (WHERE ok), '{{}}'),
       COALESCE(array_agg(scorer) FILTER (WHERE NOT ok), '{{}}'),
       COALESCE(array_agg(run) FILTER (WHERE NOT ok), '{{}}')
FROM (
    SELECT s.case_id, s.scorer COLLATE "C" AS scorer, bool_and(s.passed) AS ok, max(s.trace_id) AS run
    FROM scoring_score s
    WHERE s.experiment_id = %(experiment)s AND s.case_id IS NOT NULL AND {fresh_sql("s")}
    GROUP BY s.case_id, s.scorer COLLATE "C"
) verdicts
GROUP BY case_id
"""


def summary_build(experiment_id):
    """Build ``experiment_id``'s summary from its scores; False when a writer holds it (or on SQLite)."""
    if not summaries_kept():
        return False
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_try_advisory_xact_lock(%s, mod(%s, 2147483647)::int) AS locked", [LOCK_CLASS, experiment_id]
        )
        if not row_named(cursor).locked:
            return False
        cursor.execute("DELETE FROM scoring_score_summary WHERE experiment_id = %s", [experiment_id])
        cursor.execute("DELETE FROM scoring_score_summary_case WHERE experiment_id = %s", [experiment_id])
        stats = experiment_stats(experiment_id)
        # One sort feeds both groupings of the verdicts (hash tables of a million groups spill to disk).
        cursor.execute("SET LOCAL work_mem = '256MB'; SET LOCAL enable_hashagg = off; SET LOCAL jit = off")
        cursor.execute(CASES_BUILD, {"experiment": experiment_id})
        cases = cursor.rowcount
        cursor.execute(
            "INSERT INTO scoring_score_summary (experiment_id, stats) VALUES (%s, %s::jsonb)",
            [experiment_id, json.dumps(stats)],
        )
    if cases >= ANALYZED_FROM:
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE scoring_score_summary_case")
    return True


def summaries_build(experiment_ids):
    """Build every summary of ``experiment_ids`` that is missing, each in its own transaction."""
    if not summaries_kept() or not experiment_ids:
        return
    present = set(summaries_stats(experiment_ids))
    for experiment_id in sorted(set(experiment_ids) - present):
        summary_build(experiment_id)


def summaries_stats(experiment_ids):
    """``{experiment id: stats}`` of the summaries that are current, as ``experiment_stats`` gives them."""
    if not summaries_kept():
        return {}
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT experiment_id, stats FROM scoring_score_summary WHERE experiment_id = ANY(%s)",
            [list(experiment_ids)],
        )
        return {row.experiment_id: stats_loaded(row.stats) for row in rows_named(cursor)}


FLIPS = """
WITH paired AS MATERIALIZED (
    SELECT b.case_id, b.passing AS bp, b.passing_runs AS bpr, b.failing AS bf, b.failing_runs AS bfr,
           c.passing AS cp, c.passing_runs AS cpr, c.failing AS cf, c.failing_runs AS cfr
    FROM scoring_score_summary_case b
    JOIN scoring_score_summary_case c ON c.experiment_id = %(candidate)s AND c.case_id = b.case_id
    WHERE b.experiment_id = %(base)s AND (b.passing && c.failing OR b.failing && c.passing)
),
flips AS MATERIALIZED (
    SELECT p.case_id, 1 AS b_ok, x.scorer, x.run AS b_run, p.cfr[array_position(p.cf, x.scorer)] AS c_run
    FROM paired p, unnest(p.bp, p.bpr) AS x(scorer, run)
    WHERE x.scorer = ANY(p.cf) AND (%(all)s OR x.scorer = ANY(%(scorers)s))
    UNION ALL
    SELECT p.case_id, 0, x.scorer, x.run, p.cpr[array_position(p.cp, x.scorer)]
    FROM paired p, unnest(p.bf, p.bfr) AS x(scorer, run)
    WHERE x.scorer = ANY(p.cp) AND (%(all)s OR x.scorer = ANY(%(scorers)s))
),
totals AS (SELECT b_ok, count(*) AS total FROM flips GROUP BY b_ok),
shown AS (
    (SELECT * FROM flips WHERE b_ok = 1 ORDER BY case_id, scorer COLLATE "C" LIMIT %(shown)s)
    UNION ALL
    (SELECT * FROM flips WHERE b_ok = 0 ORDER BY case_id, scorer COLLATE "C" LIMIT %(shown)s)
)
SELECT s.b_ok, s.case_id, s.scorer, s.b_run AS b_trace, s.c_run AS c_trace, t.total
FROM shown s JOIN totals t USING (b_ok)
ORDER BY s.b_ok DESC, s.case_id, s.scorer COLLATE "C"
"""


def summary_flipped_rows(base_id, candidate_id, scorers, shown):
    """The flipped (case, scorer) pairs from two current summaries, as compare reads them from scores.

    Rows ``(was_ok, case_id, scorer, base run pk, candidate run pk, count of that
    direction)``: the first ``shown`` of each direction in (case id, scorer) order.
    """
    params = {"base": base_id, "candidate": candidate_id, "all": not scorers, "scorers": list(scorers or []),
              "shown": shown}  # fmt: skip
    with connection.cursor() as cursor:
        # Paired by hashing whatever the statistics say (a nested loop over two large
        # summaries thought small would take minutes), in memory (the hash of two sides
        # of 100,000 cases spilled to disk at the default work_mem), and not compiled:
        # the cost the planner then puts on the plan would set off JIT, 0.35 s for
        # nothing. Set for this statement only.
        cursor.execute(
            "SELECT current_setting('enable_nestloop') AS nestloop, current_setting('jit') AS jit, "
            "current_setting('work_mem') AS work_mem, set_config('enable_nestloop', 'off', true) AS nestloop_off, "
            "set_config('jit', 'off', true) AS jit_off, set_config('work_mem', '64MB', true) AS work_mem_set"
        )
        before = row_named(cursor)
        cursor.execute(FLIPS, params)
        rows = rows_named(cursor)
        cursor.execute(
            "SELECT set_config('enable_nestloop', %s, true), set_config('jit', %s, true), "
            "set_config('work_mem', %s, true)",
            [before.nestloop, before.jit, before.work_mem],
        )
        return rows
