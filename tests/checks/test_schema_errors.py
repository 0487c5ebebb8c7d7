"""``schema_errors`` lists every violation in one order, a ``false`` sub-schema's (which names no validator) included."""

from checks.scorers.schemas import schema_errors


def test_a_false_sub_schema_beside_other_errors_at_one_path_is_listed_not_a_crash():
    errors = schema_errors({"allOf": [False, {"type": "string"}]}, 1)
    assert [(e["path"], e["validator"]) for e in errors] == [("$", None), ("$", "type")]
    assert errors[0]["message"] == "False schema does not allow 1"
