"""The gate policy over HTTP: its request and answer serializers, built from ``gating.policy_fields``.

``GatePolicyIO`` checks a ``PUT`` (every field optional), ``GatePolicyOut`` writes the
answer and documents it: one table of fields drives both, and the OpenAPI schema.
"""

from rest_framework import serializers

from gating.policy_fields import POLICY_TABLE
from gating.selectors import floor_changes_recent
from web.api.rest import Text


def _input_field(f):
    common = {"required": False, "allow_null": f.nullable}
    if f.help:
        common["help_text"] = f.help
    if f.kind == "float":
        return serializers.FloatField(min_value=f.minimum, max_value=f.maximum, **common)
    if f.kind == "int":
        return serializers.IntegerField(min_value=f.minimum, max_value=f.maximum, **common)
    if f.kind == "bool":
        return serializers.BooleanField(**common)
    if f.kind == "choice":
        return serializers.ChoiceField(choices=f.choices, **common)
    if f.kind == "scorers":
        return serializers.ListField(child=Text(max_length=f.max_length), **common)
    if f.kind == "experiment":
        return serializers.CharField(max_length=f.max_length, **common)
    raise ValueError(f"unknown policy field kind {f.kind!r}")


def _output_field(f):
    common = {"allow_null": f.nullable}
    if f.out_help:
        common["help_text"] = f.out_help
    if f.kind == "float":
        return serializers.FloatField(**common)
    if f.kind == "int":
        return serializers.IntegerField(**common)
    if f.kind == "bool":
        return serializers.BooleanField(**common)
    if f.kind == "choice":
        return serializers.ChoiceField(f.choices, **common)
    if f.kind == "scorers":
        return serializers.ListField(child=serializers.CharField(), **common)
    if f.kind == "experiment":
        return serializers.CharField(source=f"{f.name}.name", **common)
    raise ValueError(f"unknown policy field kind {f.kind!r}")


def _above_check(f):
    def validate(self, value):
        if value is not None and value <= f.above:
            raise serializers.ValidationError(f.above_message)
        return value

    return validate


def _policy_io():
    attrs = {f.name: _input_field(f) for f in POLICY_TABLE}
    attrs.update({f"validate_{f.name}": _above_check(f) for f in POLICY_TABLE if f.above is not None})
    attrs["reason"] = Text(
        max_length=2000, required=False, allow_blank=True,
        help_text="Why: kept in the policy's history; required to loosen the gate (which needs an admin key).",
    )  # fmt: skip
    return type("GatePolicyIO", (serializers.Serializer,), attrs)


GatePolicyIO = _policy_io()

FLOOR_HISTORY_SHOWN = 20


class _FloorHistory(serializers.ListSerializer):
    """The policy's latest moves of the floor, newest first (none for an unsaved default policy)."""

    def to_representation(self, policy):
        return super().to_representation(floor_changes_recent(policy=policy, limit=FLOOR_HISTORY_SHOWN))


class FloorChangeOut(serializers.Serializer):
    old_floor = serializers.FloatField()
    new_floor = serializers.FloatField()
    source = serializers.CharField(help_text="api, ratchet, init or admin.")
    reason = serializers.CharField(allow_blank=True)
    at = serializers.DateTimeField(source="created_at")

    class Meta:
        list_serializer_class = _FloorHistory


def _policy_out():
    attrs = {"dataset": serializers.CharField(source="dataset.name")}
    attrs.update({f.name: _output_field(f) for f in POLICY_TABLE})
    attrs["floor_history"] = FloorChangeOut(
        many=True, source="*", help_text=f"The latest {FLOOR_HISTORY_SHOWN} moves of the floor, newest first."
    )
    attrs["revision"] = serializers.IntegerField(help_text="The policy's latest revision (0: never changed).")
    return type("GatePolicyOut", (serializers.Serializer,), attrs)


GatePolicyOut = _policy_out()


def policy_answer(policy):
    """The answer about ``policy`` (``GET``/``PUT .../gate-policy``)."""
    return GatePolicyOut(policy).data
