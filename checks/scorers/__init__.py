"""Deterministic scorers and agent checks: pure functions of a loaded run.

Nothing in this package imports Django, DRF or Celery: the scoring pass loads runs in
bulk into ``RunView``s, resolves each scorer's config, calls ``score_run`` and writes
what comes back. The rules every scorer applies are in ``docs/scorers.md``.

Typical use::

    scorer = scorer_get("latency_budget")
    config = resolve_config(scorer, request_config.get(scorer.id), run)
    outcome = score_run(scorer, run, config)  # Result or Abstain, never raises
    key = config_hash(config)
"""

from .base import (
    READS,
    Abstain,
    Result,
    RunView,
    Scorer,
    SpanView,
    config_missing_abstain,
    run_from_payload,
    score_run,
)
from .config import config_hash, config_validate, resolve_config
from .registry import (
    AGENT_CHECK_IDS,
    BUILTIN_IDS,
    SCORERS,
    answer_check_scorer,
    answer_is_checked,
    gating_scorers,
    scorer_get,
    scorers_describe,
)
from .values import canonical_json

__all__ = [
    "AGENT_CHECK_IDS",
    "READS",
    "BUILTIN_IDS",
    "SCORERS",
    "Abstain",
    "Result",
    "RunView",
    "Scorer",
    "SpanView",
    "answer_check_scorer",
    "answer_is_checked",
    "canonical_json",
    "config_hash",
    "config_missing_abstain",
    "config_validate",
    "gating_scorers",
    "resolve_config",
    "run_from_payload",
    "score_run",
    "scorer_get",
    "scorers_describe",
]
