"""The shapes of answers built as plain dicts, for the OpenAPI schema only.

The views answer these values as they are; the serializers here describe them, so a
generated client reads a typed object where it would otherwise get a bare dict. Nothing
here changes an answer: ``shaped`` gives a field class whose values are serialized as
its base class does, declared in the schema as a shape. As everywhere in the schema,
no shape forbids extra properties, so a newer server's additions do not break an older
client. ``tests/test_openapi_schema.py`` lists every object left without properties.
"""

from drf_spectacular.utils import extend_schema_field, inline_serializer
from rest_framework import serializers


def shaped(base, shape, name):
    """A subclass ``name`` of the field class ``base``, declared in the schema as ``shape``."""
    return extend_schema_field(shape)(type(name, (base,), {"__doc__": f"A {base.__name__} declared as {shape!r}."}))


class GateTrial(serializers.Serializer):
    trial = serializers.IntegerField()
    trace_id = serializers.CharField()
    passed = serializers.BooleanField(allow_null=True)
    failed_checks = serializers.ListField(child=serializers.CharField())


LabelValue = shaped(
    serializers.JSONField,
    {
        "type": ["boolean", "string", "number"],
        "description": "true/false, a category, or a number, by the config's kind.",
    },
    "LabelValue",
)

_TOKENS = "input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens, total_tokens"
TokenUsage = inline_serializer(
    "TokenUsage",
    {
        name: serializers.IntegerField(required=False, help_text="Summed over the run's model calls.")
        for name in _TOKENS.split(", ")
    },
)

CostDetail = inline_serializer(
    "CostDetail",
    {
        "estimated": serializers.BooleanField(required=False, help_text="Some cost was estimated from tokens."),
        "sources": serializers.ListField(
            child=serializers.CharField(), required=False, help_text="reported, override, genai-prices."
        ),
        "price_table": serializers.CharField(required=False, help_text="The price table and its version."),
        "unknown_price": serializers.ListField(
            child=serializers.CharField(),
            required=False,
            help_text="Models with tokens but no known price: the run's cost is then empty.",
        ),
    },
)

_Flip = inline_serializer(
    "FlippedCase",
    {
        "case_id": serializers.IntegerField(),
        "case": serializers.CharField(allow_null=True, help_text="The case's name."),
        "scorer": serializers.CharField(),
        "base_trace_id": serializers.CharField(allow_null=True),
        "candidate_trace_id": serializers.CharField(allow_null=True),
    },
    many=True,
)
Flipped = inline_serializer(
    "Flipped",
    {
        "pass_to_fail": _Flip,
        "pass_to_fail_count": serializers.IntegerField(help_text="All of them; the list shows the first ones."),
        "fail_to_pass": _Flip,
        "fail_to_pass_count": serializers.IntegerField(),
    },
)

PassSelection = inline_serializer(
    "PassSelection",
    {
        "trace_ids": serializers.IntegerField(required=False, help_text="How many runs were named."),
        "limit": serializers.IntegerField(required=False),
        "from": serializers.DateTimeField(required=False),
        "experiment": serializers.CharField(required=False),
        "until": serializers.DateTimeField(required=False, help_text="Runs ingested later are not part of it."),
    },
)

LabelHistoryEntry = inline_serializer(
    "LabelHistoryEntry",
    {
        "label": LabelValue(help_text="The earlier value."),
        "comment": serializers.CharField(allow_blank=True),
        "at": serializers.DateTimeField(allow_null=True),
    },
    many=True,
)

_PerMillion = inline_serializer(
    "PricePerMillionTokens",
    {
        name: shaped(serializers.JSONField, {"type": ["number", "string", "null"]}, "PricePerMillion")(
            help_text="USD; a tiered price as its text; null when not priced."
        )
        for name in ("input", "output", "cache_read", "cache_write")
    },
    required=False,
)
PriceLookup = inline_serializer(
    "PriceLookup",
    {
        "model": serializers.CharField(),
        "known": serializers.BooleanField(),
        "source": serializers.CharField(allow_null=True, help_text="override or the price table; null: unknown."),
        "priced_as": serializers.CharField(required=False),
        "estimated": serializers.BooleanField(required=False),
        "per_million_tokens": _PerMillion,
        "reason": serializers.CharField(required=False, help_text="unknown_price, when not known."),
    },
)
PriceTable = inline_serializer(
    "PriceTable",
    {
        "package": serializers.CharField(),
        "version": serializers.CharField(),
        "providers": serializers.IntegerField(),
        "models": serializers.IntegerField(),
    },
)

_Confusion = inline_serializer(
    "ConfusionRow", {"judge_pass": serializers.IntegerField(), "judge_fail": serializers.IntegerField()}
)
_ReviewerLabel = inline_serializer(
    "ReviewerLabel",
    {
        "author": serializers.CharField(allow_null=True),
        "label": LabelValue(),
        "comment": serializers.CharField(allow_blank=True),
    },
    many=True,
)
CriterionAgreementOut = inline_serializer(
    "CriterionAgreement",
    {
        "criterion": serializers.CharField(),
        "n": serializers.IntegerField(help_text="Runs with both a judge score and reviewers' labels."),
        "accuracy": serializers.FloatField(allow_null=True),
        "kappa": serializers.FloatField(allow_null=True, help_text="Cohen's kappa; null when undefined."),
        "confusion": inline_serializer(
            "Confusion",
            {"human_pass": _Confusion, "human_fail": _Confusion},
            help_text="Rows: reviewers; columns: the judge.",
        ),
        "disagreements": inline_serializer(
            "Disagreement",
            {
                "trace_id": serializers.CharField(),
                "judge_passed": serializers.BooleanField(),
                "judge_reason": serializers.CharField(allow_null=True),
                "labels": _ReviewerLabel,
            },
            many=True,
            help_text="Runs where they disagree, newest first.",
        ),
    },
)

CaseHistoryOut = inline_serializer(
    "CaseHistory",
    {
        "case_id": serializers.IntegerField(),
        "name": serializers.CharField(),
        "experiments": inline_serializer(
            "CaseHistoryEntry",
            {
                "experiment": serializers.CharField(),
                "gate_run_id": serializers.IntegerField(),
                "at": serializers.DateTimeField(),
                "outcome": serializers.ChoiceField(["passed", "failed", "unmeasured"]),
                "flaky": serializers.BooleanField(),
                "quarantined": serializers.BooleanField(),
                "trials": serializers.IntegerField(),
                "passed_trials": serializers.IntegerField(),
                "trial_results": GateTrial(many=True),
            },
            many=True,
            help_text="Newest first.",
        ),
        "flip_rate": serializers.FloatField(
            allow_null=True, help_text="Share of consecutive experiments whose outcomes differ."
        ),
    },
)

MonitorFilter = inline_serializer(
    "MonitorFilter",
    {
        "name": serializers.CharField(required=False, min_length=1, max_length=200),
        "tags": serializers.ListField(
            child=serializers.CharField(min_length=1, max_length=200), required=False, help_text="All present."
        ),
    },
)
