"""Repair JSON values that hold an integer beyond the 64-bit range (``1e20`` sent as a number).

Such a value was accepted before the range rule; PostgreSQL keeps it as an exact integer
that the API's JSON encoder cannot write, so every list showing the row failed. Each one
becomes its decimal text (``"100000000000000000000"``): nothing is lost, and the row
reads again. On PostgreSQL only the rows holding such a number are read.
"""

from django.db import migrations

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
BATCH = 500
FIELDS = {
    "Trace": ["input", "output", "metadata", "tags"],
    "Span": ["input", "output", "usage", "attributes"],
    "Experiment": ["metadata"],
    "GoldenCase": ["input", "expected_output", "expectations", "metadata"],
    "CaseRevision": ["old", "new"],
}
_OUT_OF_RANGE = (
    f'strict $.** ? (@.type() == "number" && (@ > {INT64_MAX} || @ < {INT64_MIN}))'
)


def _in_range(value):
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value if INT64_MIN <= value <= INT64_MAX else str(value)
    if isinstance(value, dict):
        return {key: _in_range(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_in_range(item) for item in value]
    return value


def _suspects(model, fields, vendor):
    rows = model.objects.all()
    if vendor != "postgresql":
        return rows
    table = model._meta.db_table
    condition = " OR ".join(f"jsonb_path_exists({table}.{name}, %s)" for name in fields)
    return rows.extra(where=[f"({condition})"], params=[_OUT_OF_RANGE] * len(fields))


def repair(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    for model_name, fields in FIELDS.items():
        model = apps.get_model("datasets", model_name)
        changed = []
        for row in _suspects(model, fields, vendor).only("pk", *fields).iterator(chunk_size=BATCH):
            fixed = {name: _in_range(getattr(row, name)) for name in fields}
            if any(fixed[name] != getattr(row, name) for name in fields):
                for name, value in fixed.items():
                    setattr(row, name, value)
                changed.append(row)
            if len(changed) >= BATCH:
                model.objects.bulk_update(changed, fields)
                changed = []
        if changed:
            model.objects.bulk_update(changed, fields)


class Migration(migrations.Migration):
    dependencies = [("datasets", "0009_run_session_user_conversation")]

    operations = [migrations.RunPython(repair, migrations.RunPython.noop)]
