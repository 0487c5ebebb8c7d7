"""Scores point at datasets.Experiment; JudgeConfig moves here from evalsite (its table stays);
the stale flag, written by ingestion, becomes the run revision a score was computed on."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def stale_to_revision(apps, schema_editor):
    """A run with a stale score changed after scoring: give it revision 2, its fresh scores 2, stale ones 1."""
    Score = apps.get_model('scoring', 'Score')
    Trace = apps.get_model('datasets', 'Trace')
    changed = Score.objects.filter(stale=True).values('trace_id').distinct()
    Trace.objects.filter(pk__in=changed).update(revision=2)
    Score.objects.filter(trace_id__in=changed, stale=False).update(run_revision=2)


def revision_to_stale(apps, schema_editor):
    Score = apps.get_model('scoring', 'Score')
    Trace = apps.get_model('datasets', 'Trace')
    for trace_id, revision in Trace.objects.filter(revision__gt=1).values_list('pk', 'revision'):
        Score.objects.filter(trace_id=trace_id, run_revision__lt=revision).update(stale=True)


class Migration(migrations.Migration):

    dependencies = [
        ('scoring', '0003_chunk_claimed_by'),
        ('datasets', '0004_experiment_revision'),
        ('evalsite', '0002_judgeconfig'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name='score',
                    name='experiment',
                    field=models.ForeignKey(blank=True, db_constraint=False, db_index=False, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='datasets.experiment'),
                ),
                migrations.AlterField(
                    model_name='abstention',
                    name='experiment',
                    field=models.ForeignKey(blank=True, db_constraint=False, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='datasets.experiment'),
                ),
                migrations.CreateModel(
                    name='JudgeConfig',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('endpoint', models.CharField(blank=True, default='', max_length=500)),
                        ('model', models.CharField(blank=True, default='', max_length=200)),
                        ('api_key', models.CharField(blank=True, default='', max_length=1000)),
                        ('timeout_seconds', models.PositiveSmallIntegerField(default=30)),
                        ('criteria', models.JSONField(blank=True, default=dict)),
                        ('max_concurrency', models.PositiveSmallIntegerField(default=4)),
                        ('updated_at', models.DateTimeField(auto_now=True)),
                        ('project', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='judge_config', to='evalsite.project')),
                        ('updated_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'verbose_name': 'judge configuration',
                        'db_table': 'evalsite_judgeconfig',
                        'constraints': [models.CheckConstraint(condition=models.Q(('timeout_seconds__gte', 1), ('timeout_seconds__lte', 300)), name='judge_timeout_1_300'), models.CheckConstraint(condition=models.Q(('max_concurrency__gte', 1), ('max_concurrency__lte', 32)), name='judge_concurrency_1_32')],
                    },
                ),
            ],
            database_operations=[],
        ),
        migrations.AddField(
            model_name='score',
            name='run_revision',
            field=models.PositiveIntegerField(db_default=1, default=1),
        ),
        migrations.RunPython(stale_to_revision, revision_to_stale),
        migrations.RemoveField(
            model_name='score',
            name='stale',
        ),
    ]
