"""What a project may name in a scoring request: the built-in scorers, then its judge's criteria.

``catalog_for(project)`` reads the project's judge once and answers every question a
request, a pass or the gate asks about scorer ids, so none of them goes back and forth
between modules to ask:

- ``scorers``: ``{id: Scorer}`` of the 13 built-in scorers and the agent checks
  (``checks.scorers``), then the configured judge criteria as ``JudgeCriterion``
  scorers (``scoring.judge.criteria``);
- ``criteria_ids`` and ``judged(ids)``: the judge criteria, and those among ``ids``;
- ``request_config_ids``: the scorers a request must configure;
- ``judge``: the judge's spec (its timeout sets how many runs a request can judge,
  ``judge_sync_cap``).

The rules that use these facts are the callers' (``scoring.selection.requests`` for requests).
"""

import time
from dataclasses import dataclass

from django.conf import settings

from checks.judge.limits import judge_run_cap
from checks.judge.spec import Judge
from checks.scorers import SCORERS
from scoring.judge.criteria import scorers_from_judge
from scoring.judge.selectors import judge_get


@dataclass(frozen=True)
class Catalog:
    """Plain data, read once: asking it never calls back into this module."""

    scorers: dict  # {id: Scorer}: built-ins and agent checks, then the criteria
    judge: Judge | None  # None while the project's judge is off
    criteria_ids: tuple  # the configured criteria, sorted
    request_config_ids: frozenset  # scorers a request must configure (or select runs with cases)

    def judged(self, scorer_ids):
        """The ``JudgeCriterion`` scorers among ``scorer_ids``, in their order."""
        return [self.scorers[s] for s in scorer_ids if s in self.scorers and s in self.criteria_ids]


def catalog_for(project):
    """The project's ``Catalog`` (one query: its judge)."""
    judge = judge_get(project)
    scorers = dict(SCORERS)
    if judge is not None:
        scorers.update(scorers_from_judge(judge))
    return Catalog(
        scorers=scorers,
        judge=judge,
        criteria_ids=tuple(sorted(judge.criteria)) if judge else (),
        request_config_ids=frozenset(s.id for s in scorers.values() if requires_request_config(s)),
    )


def requires_request_config(scorer):
    """Whether naming ``scorer`` without config (and without cases) is a 400.

    A scorer that needs config gets it from the request or from a linked case. The
    exception is a scorer whose only missing input is the expected answer
    (``exact_match``): it abstains ``no_expected_output`` instead, so a pass over runs
    without a reference says so run by run rather than refusing the whole request.
    """
    return scorer.needs_config and scorer.missing_reason != "no_expected_output"


def judge_deadline(started=None):
    """``time.monotonic()`` of ``started`` (default: now) plus the request timeout: the end of a request's judge calls."""
    return (time.monotonic() if started is None else started) + settings.EVALSITE_REQUEST_TIMEOUT_SECONDS


def judge_sync_cap(judge, criteria_count):
    """Runs a synchronous request can judge: ``EVALSITE_REQUEST_TIMEOUT_SECONDS // (timeout_seconds × criteria)``."""
    return judge_run_cap(settings.EVALSITE_REQUEST_TIMEOUT_SECONDS, judge.timeout_seconds, criteria_count)
