"""A score's config is stored once per project and hash (``ScoreConfig``), not in every score."""

import django.db.models.deletion
from django.db import migrations, models

BATCH = 2000


def configs_copy(apps, schema_editor):
    """One ``ScoreConfig`` per (project, config hash) of the stored scores, from the score that has it."""
    Score = apps.get_model("scoring", "Score")
    ScoreConfig = apps.get_model("scoring", "ScoreConfig")
    seen, pending = set(), []
    rows = Score.objects.order_by("id").values_list("project_id", "config_hash", "config")
    for project_id, digest, config in rows.iterator(chunk_size=BATCH):
        if (project_id, digest) not in seen:
            seen.add((project_id, digest))
            pending.append(ScoreConfig(project_id=project_id, config_hash=digest, config=config))
        if len(pending) >= BATCH:
            ScoreConfig.objects.bulk_create(pending)
            pending = []
    ScoreConfig.objects.bulk_create(pending)


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
