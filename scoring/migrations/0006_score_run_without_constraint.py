"""Scores keep their run without a database foreign key; a trigger deletes a deleted run's scores.

See ``Score``'s docstring: the per-row check cost half of a pass's writing time. On
PostgreSQL, a statement trigger on the run table deletes the scores of the runs a
statement deleted, including scores a writer committed while the deletion waited on
its lock, which Django's cascade (run before) could not see.
"""

import django.db.models.deletion
from django.db import migrations, models

TRIGGER = """
CREATE FUNCTION scoring_run_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM scoring_score s USING deleted_runs d WHERE s.trace_id = d.id;
    RETURN NULL;
END
$$;
CREATE TRIGGER scoring_run_deleted AFTER DELETE ON datasets_trace
    REFERENCING OLD TABLE AS deleted_runs FOR EACH STATEMENT EXECUTE FUNCTION scoring_run_deleted();
"""
TRIGGER_DROP = """
DROP TRIGGER IF EXISTS scoring_run_deleted ON datasets_trace;
DROP FUNCTION IF EXISTS scoring_run_deleted();
"""


def _on_postgresql(sql):
    def run(apps, schema_editor):
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute(sql)

    return run


class Migration(migrations.Migration):
    dependencies = [
        ("datasets", "0010_json_numbers_in_range"),
        ("scoring", "0005_labels_queue_calibration"),
    ]

    operations = [
        migrations.AlterField(
            model_name="score",
            name="trace",
            field=models.ForeignKey(
                db_constraint=False,
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="scores",
                to="datasets.trace",
            ),
        ),
        migrations.RunPython(_on_postgresql(TRIGGER), _on_postgresql(TRIGGER_DROP)),
    ]
