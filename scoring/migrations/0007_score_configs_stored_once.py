"""A score's config is stored once per project and hash (``ScoreConfig``), not in every score."""

import django.db.models.deletion
from django.db import migrations, models

COPY_SQL = {
    "postgresql": (
        "INSERT INTO scoring_scoreconfig (project_id, config_hash, config) "
        "SELECT DISTINCT ON (project_id, config_hash) project_id, config_hash, config FROM scoring_score "
        "ORDER BY project_id, config_hash, id"
    ),
    # The first of each (project, hash) in id order is kept, as on PostgreSQL.
    "sqlite": (
        "INSERT OR IGNORE INTO scoring_scoreconfig (project_id, config_hash, config) "
        "SELECT project_id, config_hash, config FROM scoring_score ORDER BY id"
    ),
}


def configs_copy(apps, schema_editor):
    """One ``ScoreConfig`` per (project, config hash) of the stored scores, in one statement."""
    schema_editor.execute(COPY_SQL[schema_editor.connection.vendor])


class Migration(migrations.Migration):
    dependencies = [
        ("evalsite", "0005_project_retention_days"),
        ("scoring", "0006_score_run_without_constraint"),
    ]

    operations = [
        migrations.CreateModel(
            name="ScoreConfig",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("config_hash", models.CharField(max_length=64)),
                ("config", models.JSONField(blank=True, default=dict)),
                (
                    "project",
                    models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="evalsite.project",
                    ),
                ),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(fields=("project", "config_hash"), name="score_config_unique_project_hash")
                ],
            },
        ),
        migrations.RunPython(configs_copy, migrations.RunPython.noop),
        migrations.RemoveField(model_name="score", name="config"),
    ]
