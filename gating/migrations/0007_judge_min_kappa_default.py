from django.db import migrations, models


def calibrated_judges_only(apps, schema_editor):
    """Policies that never set a kappa now need one: a judge nobody compared with people no longer decides."""
    apps.get_model("experiments", "GatePolicy").objects.filter(judge_min_kappa__isnull=True).update(judge_min_kappa=0.6)


class Migration(migrations.Migration):
    dependencies = [("experiments", "0006_policy_revisions")]

    operations = [
        migrations.AlterField(
            model_name="gatepolicy",
            name="judge_min_kappa",
            field=models.FloatField(blank=True, default=0.6, null=True),
        ),
        migrations.RunPython(calibrated_judges_only, migrations.RunPython.noop),
    ]
