"""A project's own model prices (``ModelPrice``) and what is known of a model's price.

An override applies to model calls ingested after it is set; runs already stored keep
the cost they were given.
"""

from genai_prices import data_snapshot

from datasets.models import ModelPrice
from datasets.otlp.costs import price_overrides
from datasets.otlp.pricing import PRICE_TABLE, PRICE_TABLE_VERSION, price_lookup
from evalsite.errors import NotFound


def price_override_set(*, project, model, input_per_mtok, output_per_mtok, cache_read_per_mtok=None,
                       cache_write_per_mtok=None):  # fmt: skip
    """Create or replace the project's price for ``model``; returns the ``ModelPrice``. Idempotent."""
    price, _ = ModelPrice.objects.update_or_create(
        project=project,
        model=model,
        defaults={
            "input_per_mtok": input_per_mtok,
            "output_per_mtok": output_per_mtok,
            "cache_read_per_mtok": cache_read_per_mtok,
            "cache_write_per_mtok": cache_write_per_mtok,
        },
    )
    return price


def price_override_delete(*, project, model):
    """Remove the project's price for ``model``; ``NotFound`` when it has none."""
    deleted, _ = ModelPrice.objects.filter(project=project, model=model).delete()
    if not deleted:
        raise NotFound(f"This project has no price of its own for model {model!r}.")


def price_table():
    """The price database in use: its package, version and size."""
    snapshot = data_snapshot.get_snapshot()
    return {
        "package": PRICE_TABLE,
        "version": PRICE_TABLE_VERSION,
        "providers": len(snapshot.providers),
        "models": sum(len(p.models) for p in snapshot.providers),
    }


def price_known(*, project, model, provider=None):
    """What ingestion would price ``model`` at: the project's override, the table's price, or unknown."""
    return price_lookup(model=model, provider=provider, overrides=price_overrides(project))


def price_override_list(*, project):
    """The project's own model prices, by model name."""
    return ModelPrice.objects.filter(project=project)
