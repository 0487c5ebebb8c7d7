"""Model calls priced as they are ingested, and a run's token totals, models and cost detail.

``spans_price`` prices the model calls (``llm`` spans) of an export with the project's
price overrides and the genai-prices table (``pricing``). ``runs_usage`` sums, per run,
the token counts of its model calls (of all its spans when no model call has any), lists
the models in the order first used, and states how the run's cost was found:
``{"estimated": bool, "sources": [...]}``, or ``{"unknown_price": [models]}`` when a
model call with tokens has no known price, in which case the run's cost is left empty
(an understated cost would pass a budget it should fail). A call with a model and only a
total token count is of unknown price too: the total cannot be priced. A call whose
tokens price beyond what a cost can hold is rejected alone, with a reason; the rest of
the export is kept.
"""

from datasets.models import ModelPrice, Span, SpanKind
from datasets.otlp.pricing import PRICE_TABLE, PRICE_TABLE_VERSION, CostOutOfRange, Price, price_call

TOKEN_FIELDS = (
    "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens", "total_tokens",
)  # fmt: skip
ESTIMATED = ("genai-prices", "override")


def price_overrides(project):
    """``{model: Price}``: the project's own prices."""
    return {
        p.model: Price(p.input_per_mtok, p.output_per_mtok, p.cache_read_per_mtok, p.cache_write_per_mtok)
        for p in ModelPrice.objects.filter(project=project)
    }


def spans_price(project, by_trace):
    """Price the mapped model calls of ``{trace_id: {span_id: MappedSpan}}`` that sent no cost.

    Returns the rejections, as sentences: a call priced beyond what a cost can hold is
    removed from ``by_trace`` (and its run, when it was the run's only span).
    """
    overrides = None
    rejected = []
    for trace_id, spans in list(by_trace.items()):
        for span_id, span in list(spans.items()):
            if span.kind != SpanKind.LLM:
                continue
            if span.cost_cents is not None:
                span.usage = {**(span.usage or {}), "cost_source": "reported"}
                continue
            usage = span.usage or {}
            if not span.model or not any(usage.get(f) for f in TOKEN_FIELDS):
                continue
            if not (usage.get("input_tokens") or usage.get("output_tokens")):
                # Only a total: it cannot be split into input and output at their prices.
                # Unpriced in silence, the run's cost would be understated by this call.
                span.usage = {**usage, "unknown_price": True}
                continue
            if overrides is None:
                overrides = price_overrides(project)
            try:
                priced = price_call(model=span.model, provider=span.provider, usage=usage, overrides=overrides)
            except CostOutOfRange as exc:
                del spans[span_id]
                rejected.append(f"span {span_id} of run {trace_id}: its tokens price at {exc}")
                continue
            if priced.cents is None:
                span.usage = {**usage, "unknown_price": True}
            else:
                span.cost_cents = priced.cents
                span.usage = {**usage, "cost_source": priced.source, "priced_as": priced.priced_as}
        if not spans:
            del by_trace[trace_id]
    return rejected


def runs_usage(pks):
    """``{trace_pk: (usage totals or None, models, cost detail or None)}`` from the stored spans."""
    rows = Span.objects.filter(trace_id__in=pks).exclude(model=None, usage=None)
    by_trace = {}
    for trace_pk, kind, model, usage in rows.order_by("started_at", "position").values_list(
        "trace_id", "kind", "model", "usage"
    ):
        by_trace.setdefault(trace_pk, []).append((kind, model, usage if isinstance(usage, dict) else {}))
    return {pk: _run_usage(spans) for pk, spans in by_trace.items()}


def _run_usage(spans):
    counted = [s for s in spans if s[0] == SpanKind.LLM and _has_tokens(s[2])] or spans
    totals = {}
    for _, _, usage in counted:
        for field in TOKEN_FIELDS:
            value = usage.get(field)
            if isinstance(value, int) and not isinstance(value, bool):
                totals[field] = totals.get(field, 0) + value
    models = list(dict.fromkeys(m for _, m, _ in spans if m))
    unknown = list(dict.fromkeys(m for _, m, u in spans if u.get("unknown_price") and m))
    sources = sorted({u["cost_source"] for _, _, u in spans if u.get("cost_source")})
    if unknown:
        detail = {"unknown_price": unknown}
    elif sources:
        detail = {"estimated": any(s in ESTIMATED for s in sources), "sources": sources}
        if "genai-prices" in sources:
            detail["price_table"] = f"{PRICE_TABLE} {PRICE_TABLE_VERSION}"
    else:
        detail = None
    return totals or None, models, detail


def _has_tokens(usage):
    return any(isinstance(usage.get(f), int) for f in TOKEN_FIELDS)
