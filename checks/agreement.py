"""Agreement between reviewers: Cohen's kappa for two, Krippendorff's alpha for any number.

Pure functions over plain values (no database, no framework):

- ``cohens_kappa(pairs)``: two reviewers' labels of the same items, ``[(a, b)]``, any
  categories. ``(p_o - p_e) / (1 - p_e)``, p_o the share of items they agree on, p_e the
  agreement expected by chance from each reviewer's own frequencies (Cohen 1960).
- ``krippendorff_alpha(units, metric)``: each unit (an item) the list of the values its
  reviewers gave (a reviewer who did not label it is simply absent). ``1 - D_o / D_e``
  from the coincidence of values within units (Krippendorff 1980, 2011): ``nominal``
  counts any two different values as a disagreement (categories, booleans);
  ``interval`` weighs it by the squared difference (numbers). Units with fewer than two
  values are not pairable and are left out.

Both return None when the figure is undefined: nothing to compare, or every value the
same (chance already explains all agreement).
"""

from collections import Counter
from dataclasses import dataclass

NOMINAL = "nominal"
INTERVAL = "interval"
METRICS = (NOMINAL, INTERVAL)


@dataclass(frozen=True)
class Figure:
    """An agreement figure: ``method`` (kappa or alpha-nominal/interval), its ``value`` (None: undefined),
    the ``items`` compared and the ``reviewers`` who labelled them."""

    method: str
    value: float | None
    items: int
    reviewers: int


def cohens_kappa(pairs):
    """Cohen's kappa of ``pairs`` ``[(label of reviewer 1, label of reviewer 2)]``; None when undefined."""
    pairs = list(pairs)
    n = len(pairs)
    if n == 0:
        return None
    observed = sum(1 for a, b in pairs if a == b) / n
    first, second = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
    expected = sum(first[c] * second[c] for c in first) / (n * n)
    if expected >= 1:
        return None
    return (observed - expected) / (1 - expected)


def _delta(metric):
    if metric == NOMINAL:
        return lambda c, k: 0.0 if c == k else 1.0
    if metric == INTERVAL:
        return lambda c, k: float(c - k) ** 2
    raise ValueError(f"unknown metric {metric!r}; choose from {', '.join(METRICS)}")


def krippendorff_alpha(units, metric=NOMINAL):
    """Krippendorff's alpha of ``units`` (a list of each item's values) under ``metric``; None when undefined."""
    delta = _delta(metric)
    pairable = [list(values) for values in units if len(values) >= 2]
    n = sum(len(values) for values in pairable)
    if n < 2:
        return None
    observed = 0.0
    for values in pairable:
        counts = Counter(values)
        within = sum(counts[c] * counts[k] * delta(c, k) for c in counts for k in counts)
        observed += within / (len(values) - 1)
    totals = Counter(v for values in pairable for v in values)
    expected = sum(totals[c] * totals[k] * delta(c, k) for c in totals for k in totals) / (n - 1)
    if expected == 0:
        return None
    return 1 - observed / expected


def agreement_figure(labels, *, metric=NOMINAL):
    """The agreement of ``labels`` ``{item: {reviewer: value}}`` as a ``Figure``.

    Items with fewer than two reviewers are not compared. With exactly two reviewers over
    the compared items and a nominal metric: Cohen's kappa over the items both labelled.
    Otherwise (three or more, or numbers): Krippendorff's alpha under ``metric``.
    """
    compared = {item: by for item, by in labels.items() if len(by) >= 2}
    reviewers = sorted({r for by in compared.values() for r in by})
    if metric == NOMINAL and len(reviewers) == 2:
        first, second = reviewers
        pairs = [(by[first], by[second]) for by in compared.values()]
        return Figure("kappa", cohens_kappa(pairs), len(pairs), 2)
    units = [list(by.values()) for by in compared.values()]
    return Figure(f"alpha-{metric}", krippendorff_alpha(units, metric), len(units), len(reviewers))
