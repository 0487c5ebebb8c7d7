"""Experiment now lives in the datasets app (same table): references follow it, the content type too."""

import django.db.models.deletion
from django.db import migrations, models


def content_type_move(source, target):
    """Rename the content type (permissions and admin history follow it); drop it if the target exists."""

    def move(apps, schema_editor):
        ContentType = apps.get_model('contenttypes', 'ContentType')
        old = ContentType.objects.filter(app_label=source, model='experiment')
        if ContentType.objects.filter(app_label=target, model='experiment').exists():
            old.delete()
        else:
            old.update(app_label=target)

    return move


class Migration(migrations.Migration):

    dependencies = [
        ('contenttypes', '0002_remove_content_type_name'),
        ('datasets', '0004_experiment_revision'),
        ('experiments', '0002_gate'),
        ('scoring', '0004_experiment_judge_revision'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name='gatepolicy',
                    name='baseline',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='datasets.experiment'),
                ),
                migrations.AlterField(
                    model_name='gaterun',
                    name='baseline',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='datasets.experiment'),
                ),
                migrations.AlterField(
                    model_name='gaterun',
                    name='experiment',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='gate_runs', to='datasets.experiment'),
                ),
                migrations.DeleteModel(name='Experiment'),
            ],
            database_operations=[],
        ),
        migrations.RunPython(content_type_move('experiments', 'datasets'), content_type_move('datasets', 'experiments')),
    ]
