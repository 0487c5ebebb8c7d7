"""Each experiment's score aggregates, kept for compare and dropped by any change (PostgreSQL).

See ``scoring.passes.summaries``. Two tables hold an experiment's summary: its
per-scorer figures (one row, ``stats``) and its per-case verdicts (one row a case). A
summary counts only while its ``scoring_score_summary`` row exists. Statement triggers
delete that row in the transaction of every statement that changes the experiment's
scores (insert, update, delete, truncate) or a revision of a run it scored, after a
shared advisory lock on the experiment; a build holds the exclusive lock. SQLite has
no summaries: compare reads the scores there.
"""

from django.db import migrations

SUMMARIES = """
CREATE UNLOGGED TABLE scoring_score_summary (
    experiment_id bigint PRIMARY KEY,
    stats jsonb NOT NULL,
    built_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNLOGGED TABLE scoring_score_summary_case (
    experiment_id bigint NOT NULL,
    case_id bigint NOT NULL,
    passing varchar(100)[] NOT NULL,
    passing_runs bigint[] NOT NULL,
    failing varchar(100)[] NOT NULL,
    failing_runs bigint[] NOT NULL,
    PRIMARY KEY (experiment_id, case_id)
);

CREATE FUNCTION scoring_summaries_drop(experiment_ids bigint[]) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF cardinality(experiment_ids) = 0 THEN
        RETURN;
    END IF;
    PERFORM pg_advisory_xact_lock_shared(2037001, mod(e, 2147483647)::int)
        FROM unnest(experiment_ids) AS e ORDER BY e;
    DELETE FROM scoring_score_summary WHERE experiment_id = ANY(experiment_ids);
END
$$;

CREATE FUNCTION scoring_scores_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM scoring_summaries_drop(ARRAY(
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
CREATE TRIGGER scoring_scores_inserted AFTER INSERT ON scoring_score
    REFERENCING NEW TABLE AS new_scores FOR EACH STATEMENT EXECUTE FUNCTION scoring_scores_changed();
CREATE TRIGGER scoring_scores_updated AFTER UPDATE ON scoring_score
    REFERENCING OLD TABLE AS old_scores NEW TABLE AS new_scores
    FOR EACH STATEMENT EXECUTE FUNCTION scoring_scores_changed();
CREATE TRIGGER scoring_scores_deleted AFTER DELETE ON scoring_score
    REFERENCING OLD TABLE AS old_scores FOR EACH STATEMENT EXECUTE FUNCTION scoring_scores_changed();

CREATE FUNCTION scoring_scores_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM scoring_score_summary;
    RETURN NULL;
END
$$;
CREATE TRIGGER scoring_scores_truncated AFTER TRUNCATE ON scoring_score
    FOR EACH STATEMENT EXECUTE FUNCTION scoring_scores_truncated();

CREATE FUNCTION scoring_runs_revised() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM scoring_summaries_drop(ARRAY(
        SELECT DISTINCT s.experiment_id
        FROM new_runs n JOIN old_runs o ON o.id = n.id JOIN scoring_score s ON s.trace_id = n.id
        WHERE n.revision <> o.revision AND s.experiment_id IS NOT NULL));
    RETURN NULL;
END
$$;
CREATE TRIGGER scoring_runs_revised AFTER UPDATE ON datasets_trace
    REFERENCING OLD TABLE AS old_runs NEW TABLE AS new_runs
    FOR EACH STATEMENT EXECUTE FUNCTION scoring_runs_revised();

CREATE FUNCTION scoring_experiments_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM scoring_score_summary s USING deleted_experiments d WHERE s.experiment_id = d.id;
    DELETE FROM scoring_score_summary_case s USING deleted_experiments d WHERE s.experiment_id = d.id;
    RETURN NULL;
END
$$;
CREATE TRIGGER scoring_experiments_deleted AFTER DELETE ON experiments_experiment
    REFERENCING OLD TABLE AS deleted_experiments FOR EACH STATEMENT EXECUTE FUNCTION scoring_experiments_deleted();
"""

SUMMARIES_DROP = """
DROP TRIGGER IF EXISTS scoring_experiments_deleted ON experiments_experiment;
DROP TRIGGER IF EXISTS scoring_runs_revised ON datasets_trace;
DROP TRIGGER IF EXISTS scoring_scores_truncated ON scoring_score;
DROP TRIGGER IF EXISTS scoring_scores_deleted ON scoring_score;
DROP TRIGGER IF EXISTS scoring_scores_updated ON scoring_score;
DROP TRIGGER IF EXISTS scoring_scores_inserted ON scoring_score;
DROP FUNCTION IF EXISTS scoring_experiments_deleted();
DROP FUNCTION IF EXISTS scoring_runs_revised();
DROP FUNCTION IF EXISTS scoring_scores_truncated();
DROP FUNCTION IF EXISTS scoring_scores_changed();
DROP FUNCTION IF EXISTS scoring_summaries_drop(bigint[]);
DROP TABLE IF EXISTS scoring_score_summary_case;
DROP TABLE IF EXISTS scoring_score_summary;
"""


def _on_postgresql(sql):
    def run(apps, schema_editor):
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute(sql)

    return run


class Migration(migrations.Migration):
    dependencies = [
        ("datasets", "0010_json_numbers_in_range"),
        ("scoring", "0007_score_configs_stored_once"),
    ]

    operations = [migrations.RunPython(_on_postgresql(SUMMARIES), _on_postgresql(SUMMARIES_DROP))]
