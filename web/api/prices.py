"""``GET /v1/api/prices``: the price table and what it knows of a model; the project's own prices."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from datasets.model_prices import (
    price_known,
    price_override_delete,
    price_override_list,
    price_override_set,
    price_table,
)
from datasets.models import ModelPrice
from evalsite.auth import request_project
from evalsite.errors import Invalid
from evalsite.scopes import CURATE
from web.api.openapi import problem_responses
from web.api.rest import JsonDecimal, Text, validated
from web.api.shapes import PriceLookup, PriceTable, shaped

_PER_MTOK = {"max_digits": 14, "decimal_places": 6, "min_value": 0, "coerce_to_string": False}


class PriceQuery(serializers.Serializer):
    model = Text(max_length=200, required=False)
    provider = Text(max_length=100, required=False)


class ModelPriceIO(serializers.ModelSerializer):
    input_per_mtok = JsonDecimal(**_PER_MTOK, help_text="USD per million input tokens.")
    output_per_mtok = JsonDecimal(**_PER_MTOK, help_text="USD per million output tokens.")
    cache_read_per_mtok = JsonDecimal(
        **_PER_MTOK, required=False, allow_null=True, help_text="Default: the input price."
    )
    cache_write_per_mtok = JsonDecimal(
        **_PER_MTOK, required=False, allow_null=True, help_text="Default: the input price."
    )

    class Meta:
        model = ModelPrice
        fields = ["model", "input_per_mtok", "output_per_mtok", "cache_read_per_mtok", "cache_write_per_mtok",
                  "updated_at"]  # fmt: skip
        read_only_fields = ["model", "updated_at"]


PricesOut = inline_serializer(
    "PricesOut",
    {
        "price_table": shaped(serializers.DictField, PriceTable, "PriceTableField")(
            help_text="The price database: package, version, providers, models."
        ),
        "overrides": ModelPriceIO(many=True),
        "lookup": shaped(serializers.DictField, PriceLookup, "PriceLookupField")(
            allow_null=True,
            help_text="With ?model=: {model, known, source, priced_as, estimated, per_million_tokens (USD)}, or "
            "{model, known: false, reason: unknown_price}.",
        ),
    },
)


class PriceCollection(APIView):
    @extend_schema(
        operation_id="prices_retrieve",
        summary="The price table, the project's own prices, and the price of one model",
        description="Costs of OpenTelemetry model calls that send none are estimated from their tokens with the "
        "project's own price for the model, else the genai-prices table. `?model=` (and `provider=`) tells what "
        "ingestion would price that model at, or that its price is unknown.",
        parameters=[
            OpenApiParameter("model", OpenApiTypes.STR, description="A model name as spans send it."),
            OpenApiParameter("provider", OpenApiTypes.STR, description="gen_ai.provider.name (optional)."),
        ],
        responses={200: PricesOut, **problem_responses(400, 401)},
    )
    def get(self, request):
        project = request_project(request)
        query = validated(PriceQuery, request.query_params)
        overrides = price_override_list(project=project)
        lookup = None
        if query.get("model"):
            lookup = price_known(project=project, model=query["model"], provider=query.get("provider"))
        return Response(
            {"price_table": price_table(), "overrides": ModelPriceIO(overrides, many=True).data, "lookup": lookup}
        )


class PriceDetail(APIView):
    required_scopes = {"PUT": CURATE, "DELETE": CURATE}

    @extend_schema(
        operation_id="prices_set",
        summary="Set the project's own price for a model",
        description="For self-hosted or negotiated models; it wins over the price table for model calls ingested "
        "from now on.",
        request=ModelPriceIO,
        responses={200: ModelPriceIO, **problem_responses(400, 401)},
    )
    def put(self, request, model):
        project = request_project(request)
        values = validated(ModelPriceIO, request.data)
        if not model.strip() or len(model) > 200:
            return _bad_model()
        price = price_override_set(project=project, model=model, **values)
        return Response(ModelPriceIO(price).data)

    @extend_schema(
        operation_id="prices_delete",
        summary="Remove the project's own price for a model",
        responses={204: None, **problem_responses(401, 404)},
    )
    def delete(self, request, model):
        price_override_delete(project=request_project(request), model=model)
        return Response(status=status.HTTP_204_NO_CONTENT)


def _bad_model():
    raise Invalid(
        "model must be 1 to 200 characters.", errors=[{"field": "model", "message": "must be 1 to 200 characters"}]
    )
