"""The Experiment model moves here from the experiments app (its table stays), and runs gain a revision."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('datasets', '0003_case_indexes_and_checks'),
        ('evalsite', '0001_initial'),
        ('experiments', '0002_gate'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='Experiment',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('name', models.CharField(max_length=200)),
                        ('metadata', models.JSONField(blank=True, default=dict)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('dataset', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='experiments', to='datasets.dataset')),
                        ('project', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='experiments', to='evalsite.project')),
                    ],
                    options={
                        'db_table': 'experiments_experiment',
                        'ordering': ['-created_at', '-id'],
                        'constraints': [models.UniqueConstraint(fields=('project', 'name'), name='experiment_unique_project_name')],
                    },
                ),
                migrations.AlterField(
                    model_name='trace',
                    name='experiment',
                    field=models.ForeignKey(blank=True, db_index=False, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='traces', to='datasets.experiment'),
                ),
            ],
            database_operations=[],
        ),
        migrations.AddField(
            model_name='trace',
            name='revision',
            field=models.PositiveIntegerField(db_default=1, default=1),
        ),
        migrations.AddIndex(
            model_name='trace',
            index=models.Index(condition=models.Q(('revision__gt', 1)), fields=['id', 'revision'], name='trace_revised'),
        ),
    ]
