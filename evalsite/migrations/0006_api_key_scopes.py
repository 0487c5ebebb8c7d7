from django.db import migrations, models

import evalsite.models


class Migration(migrations.Migration):
    """Scopes on API keys. Keys that exist now keep full access (marked as older keys)."""

    dependencies = [("evalsite", "0005_project_retention_days")]

    operations = [
        migrations.AddField(
            model_name="apikey", name="scopes", field=models.JSONField(default=evalsite.models.default_scopes)
        ),
        # Added as True so every existing key keeps what it could do, then new keys default to False.
        migrations.AddField(model_name="apikey", name="full_access", field=models.BooleanField(default=True)),
        migrations.AlterField(model_name="apikey", name="full_access", field=models.BooleanField(default=False)),
    ]
