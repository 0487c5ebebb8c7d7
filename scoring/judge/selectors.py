"""Reads of a project's judge, for the passes, the pages and the unknown-scorer error.

- ``judge_config_get(project)``: the stored row, or None.
- ``judge_get(project)``: a ``Judge`` ready for ``judge_score`` / ``judge_many``, or
  None when the judge is off (no row, blank endpoint or model).
- ``judge_criteria_ids(project)``: the configured criteria, sorted; none when off.
- ``valid_scorer_ids(project)``: every id a pass may name: built-in scorers, agent
  checks, then the configured criteria.
- ``unknown_scorer_message(project, ids)`` / ``unknown_scorer_error(...)``: the 400 for
  an unknown scorer id. It is the only place the configured criteria are named back
  (``GET /v1/api/scorers`` lists the built-ins only).
"""

from checks.judge.spec import judge_from
from checks.scorers.registry import AGENT_CHECK_IDS, BUILTIN_IDS
from evalsite.errors import Invalid
from scoring.models import JudgeConfig


def judge_config_get(project):
    return JudgeConfig.objects.filter(project=project).first()


def judge_get(project):
    config = judge_config_get(project)
    if config is None or not config.is_configured:
        return None
    return judge_from(config)


def judge_criteria_ids(project):
    judge = judge_get(project)
    return sorted(judge.criteria) if judge else []


def valid_scorer_ids(project):
    return [*BUILTIN_IDS, *AGENT_CHECK_IDS, *judge_criteria_ids(project)]


def unknown_scorer_message(project, unknown_ids):
    """'Unknown scorer(s): x. Built-in scorers: …. Configured judge criteria: ….'"""
    criteria = judge_criteria_ids(project)
    unknown = ", ".join(str(i) for i in unknown_ids)
    built_in = ", ".join((*BUILTIN_IDS, *AGENT_CHECK_IDS))
    judged = ", ".join(criteria) if criteria else "none (the project's judge is not configured or has no criteria)"
    noun = "scorer" if len(unknown_ids) == 1 else "scorers"
    return f"Unknown {noun}: {unknown}. Built-in scorers: {built_in}. Configured judge criteria: {judged}."


def unknown_scorer_error(project, unknown_ids, *, field="scorers"):
    """The ``Invalid`` to raise for unknown scorer ids (a 400 through the one exception handler)."""
    message = unknown_scorer_message(project, unknown_ids)
    return Invalid(message, errors=[{"field": field, "message": message}])
