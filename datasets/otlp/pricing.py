"""What a model call cost, from its tokens: a project's own price, else the genai-prices table.

``genai-prices`` is a maintained database of model prices by provider and model (its
snapshot ships with the package; nothing is fetched at run time). A project may
override it per model, in USD per million tokens, for self-hosted or negotiated models
(``ModelPrice``).

A call is priced only when it has a model and token counts and sent no cost of its own
(a sent cost always wins). Its ``usage`` then records how: ``cost_source`` is
``reported`` (sent), ``override`` or ``genai-prices`` (both estimated, with the
``priced_as`` provider/model that matched), and ``unknown_price`` is true when no price
is known for the model, so the run's cost is left empty rather than understated. A
cost that comes to ``COST_CEILING_CENTS`` or more (tokens no real call spends) raises
``CostOutOfRange``: it is bounded here, where it is computed, so no caller can store a
number the column cannot hold. Pure: no Django, no database (the overrides are passed in).
"""

import functools
import importlib.metadata
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal

from genai_prices import Usage, calc_price, data_snapshot

from datasets.otlp.mapping import COST_CEILING_CENTS

PRICE_TABLE = "genai-prices"
PRICE_TABLE_VERSION = importlib.metadata.version("genai-prices")
_CENT = Decimal("0.000001")
_MILLION = Decimal(1_000_000)
# gen_ai.provider.name values whose genai-prices id differs.
_PROVIDERS = {
    "gcp.gemini": "google",
    "gcp.vertex_ai": "google",
    "gcp.gen_ai": "google",
    "aws.bedrock": "aws",
    "azure.ai.openai": "azure",
    "azure.ai.inference": "azure",
    "x_ai": "x-ai",
}


class CostOutOfRange(ValueError):
    """The tokens of a call price at more cents than a cost can be."""

    def __init__(self, cents):
        super().__init__(f"{cents:.2f} cents, beyond the most a cost can be ({COST_CEILING_CENTS - 1} cents)")
        self.cents = cents


@dataclass(frozen=True, slots=True)
class Price:
    """USD per million tokens; cache prices default to the input price when not given."""

    input: Decimal
    output: Decimal
    cache_read: Decimal | None = None
    cache_write: Decimal | None = None


@dataclass(frozen=True, slots=True)
class Priced:
    cents: Decimal | None
    source: str | None  # "override" | "genai-prices" | None (unknown)
    priced_as: str | None  # "provider/model" that matched


def price_call(*, model, provider, usage, overrides):
    """``Priced`` for one call's ``usage`` (token counts) by ``model``; cents ``None`` when unknown.

    Raises ``CostOutOfRange`` when the cost comes to ``COST_CEILING_CENTS`` or more.
    """
    tokens = {
        k: int((usage or {}).get(k) or 0)
        for k in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
    }
    override = overrides.get(model)
    if override is not None:
        return Priced(_bounded(_override_cents(override, tokens)), "override", model)
    usage_in = Usage(
        input_tokens=tokens["input_tokens"],
        output_tokens=tokens["output_tokens"],
        cache_read_tokens=tokens["cache_read_tokens"] or None,
        cache_write_tokens=tokens["cache_write_tokens"] or None,
    )
    found = _table_model(model, provider)
    if found is None:
        return Priced(None, None, None)
    table_provider, table_model = found
    price = table_model.calc_price(usage_in, table_provider, genai_request_timestamp=datetime.now(tz=UTC))
    cents = _bounded(Decimal(price.total_price) * 100)
    return Priced(cents, PRICE_TABLE, f"{table_provider.id}/{table_model.id}")


@functools.lru_cache(maxsize=4096)
def _table_model(model, provider):
    """``(provider, model)`` of the price table for a call's model and provider, or ``None``.

    Matching a name against the table takes about a millisecond; an export prices the
    same few models over and over, so the match is kept (the table is fixed per release).
    """
    provider_id = _PROVIDERS.get(provider, provider) if provider else None
    snapshot = data_snapshot.get_snapshot()
    for attempt in (provider_id, None) if provider_id else (None,):
        try:
            return snapshot.find_provider_model(model, None, attempt, None)
        except (LookupError, ValueError, TypeError):
            continue
    return None


def _override_cents(price, tokens):
    cache_read = price.cache_read if price.cache_read is not None else price.input
    cache_write = price.cache_write if price.cache_write is not None else price.input
    # Input tokens include the cached ones (as the GenAI conventions and genai-prices count them).
    plain = max(tokens["input_tokens"] - tokens["cache_read_tokens"] - tokens["cache_write_tokens"], 0)
    usd = (
        plain * price.input
        + tokens["cache_read_tokens"] * cache_read
        + tokens["cache_write_tokens"] * cache_write
        + tokens["output_tokens"] * price.output
    ) / _MILLION
    return usd * 100


def _bounded(cents):
    """``cents`` to the stored precision; compared first, as quantizing a huge number fails."""
    if cents >= COST_CEILING_CENTS or cents.quantize(_CENT) >= COST_CEILING_CENTS:
        raise CostOutOfRange(cents)
    return cents.quantize(_CENT)


def price_lookup(*, model, provider=None, overrides=None):
    """What is known of ``model``'s price: a dict for the prices API."""
    override = (overrides or {}).get(model)
    if override is not None:
        return {
            "model": model, "known": True, "source": "override", "priced_as": model, "estimated": True,
            "per_million_tokens": {
                "input": override.input, "output": override.output,
                "cache_read": override.cache_read if override.cache_read is not None else override.input,
                "cache_write": override.cache_write if override.cache_write is not None else override.input,
            },
        }  # fmt: skip
    provider_id = _PROVIDERS.get(provider, provider) if provider else None
    for attempt in (provider_id, None) if provider_id else (None,):
        try:
            found = calc_price(Usage(input_tokens=0, output_tokens=0), model_ref=model, provider_id=attempt)
        except (LookupError, ValueError, TypeError):
            continue
        prices = found.model_price
        return {
            "model": model, "known": True, "source": PRICE_TABLE, "priced_as": f"{found.provider.id}/{found.model.id}",
            "estimated": True,
            "per_million_tokens": {
                "input": _shown(prices.input_mtok), "output": _shown(prices.output_mtok),
                "cache_read": _shown(prices.cache_read_mtok), "cache_write": _shown(prices.cache_write_mtok),
            },
        }  # fmt: skip
    return {"model": model, "known": False, "reason": "unknown_price", "source": None}


def _shown(value):
    """A price as a number, a tiered price as its text (``None`` when not priced)."""
    if value is None or isinstance(value, Decimal | int | float):
        return value
    return str(value)
