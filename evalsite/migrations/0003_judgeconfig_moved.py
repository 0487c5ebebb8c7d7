"""JudgeConfig now lives in the scoring app (same table); its content type follows it."""

from django.db import migrations


def content_type_move(source, target):
    """Rename the content type (permissions and admin history follow it); drop it if the target exists."""

    def move(apps, schema_editor):
        ContentType = apps.get_model('contenttypes', 'ContentType')
        old = ContentType.objects.filter(app_label=source, model='judgeconfig')
        if ContentType.objects.filter(app_label=target, model='judgeconfig').exists():
            old.delete()
        else:
            old.update(app_label=target)

    return move


class Migration(migrations.Migration):

    dependencies = [
        ('contenttypes', '0002_remove_content_type_name'),
        ('evalsite', '0002_judgeconfig'),
        ('scoring', '0004_experiment_judge_revision'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name='JudgeConfig')],
            database_operations=[],
        ),
        migrations.RunPython(content_type_move('evalsite', 'scoring'), content_type_move('scoring', 'evalsite')),
    ]
