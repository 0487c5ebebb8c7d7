"""The gate policy's fields are declared once (gating.policy_fields); the model, the API and the page follow."""

import pytest

from gating.models import GatePolicy
from gating.policy_fields import POLICY_FIELDS, POLICY_TABLE, change_loosens
from web.api.policy_io import GatePolicyIO, GatePolicyOut
from web.pages.policy import PolicyForm

pytestmark = pytest.mark.django_db


def test_every_declared_field_is_a_model_field_with_the_declared_nullability_and_choices():
    for f in POLICY_TABLE:
        model_field = GatePolicy._meta.get_field(f.name)
        assert model_field.null == f.nullable, f.name
        if f.kind == "choice":
            assert tuple(value for value, _ in model_field.choices) == tuple(f.choices), f.name
    editable = {
        m.name for m in GatePolicy._meta.concrete_fields if m.name not in ("id", "dataset", "revision", "updated_at")
    }
    assert editable == set(POLICY_FIELDS)


def test_the_api_and_the_page_take_exactly_the_declared_fields():
    assert list(GatePolicyIO().fields) == [*POLICY_FIELDS, "reason"]
    assert list(GatePolicyOut().fields) == ["dataset", *POLICY_FIELDS, "floor_history", "revision"]
    shown = [f.name for f in POLICY_TABLE if f.label is not None]
    assert list(PolicyForm.base_fields) == [*shown, "reason"]
    for f in POLICY_TABLE:
        api = GatePolicyIO().fields[f.name]
        if f.kind in ("float", "int"):
            assert (api.min_value, api.max_value) == (f.minimum, f.maximum), f.name
            page = PolicyForm.base_fields[f.name]
            assert (page.min_value, page.max_value) == (f.minimum, f.maximum), f.name


def test_the_api_and_the_page_refuse_an_exclusive_bound_with_one_message():
    serializer = GatePolicyIO(data={"trial_pass_ratio": 0})
    assert not serializer.is_valid()
    assert serializer.errors["trial_pass_ratio"] == ["must be more than 0 (1.0: every trial must pass)"]
    form = PolicyForm({"trial_pass_ratio": "0"})
    assert not form.is_valid()
    assert form.errors["trial_pass_ratio"] == ["must be more than 0 (1.0: every trial must pass)"]


def test_each_field_but_the_baseline_declares_which_way_loosens():
    assert change_loosens("min_pass_rate", 0.9, 0.8) and not change_loosens("min_pass_rate", 0.8, 0.9)
    assert change_loosens("max_flaky", 2, None) and not change_loosens("max_flaky", None, 2)
    assert change_loosens("input_match", "require", "off") and not change_loosens("input_match", "off", "warn")
    assert change_loosens("scorers", ["a", "b"], ["a"]) and not change_loosens("scorers", ["a"], ["a", "b"])
    assert [f.name for f in POLICY_TABLE if f.loosens is None] == ["baseline"]
