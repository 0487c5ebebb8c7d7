"""Summaries kept current by the writer rather than dropped by its inserts (PostgreSQL).

See ``scoring.pipeline.summary_upkeep``. The insert trigger leaves summaries standing
while the writer's transaction says it merges what it inserts
(``evalsite.summary_upkeep`` = ``on``); ``scoring_summary_case_merged`` merges one
case's verdicts. The summaries already built are dropped: they keep no sums to merge
into (a pass or compare builds them again).
"""

from django.db import migrations

TRIGGER_BODY = """
CREATE OR REPLACE FUNCTION scoring_scores_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        {upkeep}PERFORM scoring_summaries_drop(ARRAY(
            SELECT DISTINCT experiment_id FROM new_scores WHERE experiment_id IS NOT NULL));
    ELSIF TG_OP = 'DELETE' THEN
        PERFORM scoring_summaries_drop(ARRAY(
            SELECT DISTINCT experiment_id FROM old_scores WHERE experiment_id IS NOT NULL));
    ELSE
        PERFORM scoring_summaries_drop(ARRAY(
            SELECT experiment_id FROM old_scores WHERE experiment_id IS NOT NULL
            UNION SELECT experiment_id FROM new_scores WHERE experiment_id IS NOT NULL));
    END IF;
    RETURN NULL;
END
$$;
"""
UPKEEP = """IF current_setting('evalsite.summary_upkeep', true) = 'on' THEN
            RETURN NULL;  -- the writer merges what it inserts into the summaries it opened
        END IF;
        """

MERGED = """
CREATE FUNCTION scoring_summary_case_merged(
    passing varchar[], passing_runs bigint[], failing varchar[], failing_runs bigint[],
    new_passing varchar[], new_passing_runs bigint[], new_failing varchar[], new_failing_runs bigint[]
) RETURNS TABLE (merged_passing varchar[], merged_passing_runs bigint[], merged_failing varchar[],
                 merged_failing_runs bigint[])
LANGUAGE sql IMMUTABLE AS $$
    SELECT COALESCE(array_agg(scorer ORDER BY scorer COLLATE "C") FILTER (WHERE ok), '{}'),
           COALESCE(array_agg(run ORDER BY scorer COLLATE "C") FILTER (WHERE ok), '{}'),
           COALESCE(array_agg(scorer ORDER BY scorer COLLATE "C") FILTER (WHERE NOT ok), '{}'),
           COALESCE(array_agg(run ORDER BY scorer COLLATE "C") FILTER (WHERE NOT ok), '{}')
    FROM (
        SELECT scorer, bool_and(ok) AS ok, max(run) AS run
        FROM (
            SELECT s, true, r FROM unnest(passing, passing_runs) AS x(s, r)
            UNION ALL SELECT s, false, r FROM unnest(failing, failing_runs) AS x(s, r)
            UNION ALL SELECT s, true, r FROM unnest(new_passing, new_passing_runs) AS x(s, r)
            UNION ALL SELECT s, false, r FROM unnest(new_failing, new_failing_runs) AS x(s, r)
        ) AS verdicts (scorer, ok, run)
        GROUP BY scorer
    ) AS merged
$$;
DELETE FROM scoring_score_summary;
"""
MERGED_DROP = """
DROP FUNCTION IF EXISTS scoring_summary_case_merged(
    varchar[], bigint[], varchar[], bigint[], varchar[], bigint[], varchar[], bigint[]);
DELETE FROM scoring_score_summary;
"""


def _on_postgresql(*sqls):
    def run(apps, schema_editor):
        if schema_editor.connection.vendor == "postgresql":
            for sql in sqls:
                schema_editor.execute(sql)

    return run


class Migration(migrations.Migration):
    dependencies = [("scoring", "0012_pairwise")]

    operations = [
        migrations.RunPython(
            _on_postgresql(TRIGGER_BODY.replace("{upkeep}", UPKEEP), MERGED),
            _on_postgresql(TRIGGER_BODY.replace("{upkeep}", ""), MERGED_DROP),
        )
    ]
