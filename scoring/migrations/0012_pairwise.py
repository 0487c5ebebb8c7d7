# Pairwise judgements (scoring.pairwise_models).

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('datasets', '0010_json_numbers_in_range'),
        ('evalsite', '0007_project_feedback_origins_and_rate_windows'),
        ('scoring', '0011_queue_reviewers'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='PairwiseJudgement',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('author', models.CharField(max_length=200)),
                ('verdict', models.CharField(choices=[('better', 'Better'), ('worse', 'Worse'), ('tie', 'Tie')], max_length=8)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('updated_at', models.DateTimeField(auto_now=True)),
                ('case', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='datasets.goldencase')),
                ('experiment_a', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='datasets.experiment')),
                ('experiment_b', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='datasets.experiment')),
                ('project', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='evalsite.project')),
                ('reviewer', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                ('trace_a', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='datasets.trace')),
                ('trace_b', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='datasets.trace')),
            ],
            options={
                'indexes': [models.Index(fields=['experiment_a', 'experiment_b'], name='pairwise_pair')],
                'constraints': [models.UniqueConstraint(fields=('case', 'experiment_a', 'experiment_b', 'author'), name='pairwise_unique_reviewer_case_pair'), models.CheckConstraint(condition=models.Q(('experiment_a__lt', models.F('experiment_b'))), name='pairwise_pair_in_order'), models.CheckConstraint(condition=models.Q(('verdict__in', ['better', 'worse', 'tie'])), name='pairwise_verdict_known')],
            },
        ),
    ]
