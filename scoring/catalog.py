"""What a project may name in a scoring request: the built-in scorers, then its judge's criteria.

``catalog_for(project)`` reads the project's judge once and answers every question a
request, a pass or the gate asks about scorer ids, so none of them goes back and forth
between modules to ask:

- ``scorers``: ``{id: Scorer}`` of the 13 built-in scorers and the agent checks
  (``checks.scorers``), then the configured judge criteria as ``JudgeCriterion``
  scorers (``scoring.judge.criteria``);
- ``judged(ids)``: the judge criteria among ``ids``;
- ``unknown_message(ids)``: the 400 for unknown ids, the one place the configured
  criteria are named back (``GET /v1/api/scorers`` lists only the built-ins, as
  ARCHITECTURE §5 says);
- ``sync_judge_cap(criteria)``: how many runs a synchronous request can judge,
  ``EVALSITE_REQUEST_TIMEOUT_SECONDS // (timeout_seconds × criteria)``, and
  ``pass_judge_cap``: ``EVALSITE_JUDGE_PASS_MAX_RUNS`` for a worker pass.
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
    scorers: dict
    judge: Judge | None  # None while the project's judge is off

    @property
    def criteria_ids(self):
        return sorted(self.judge.criteria) if self.judge else []

    def judged(self, scorer_ids):
        """The ``JudgeCriterion`` scorers among ``scorer_ids``, in their order."""
        return [self.scorers[s] for s in scorer_ids if s in self.scorers and self.scorers[s].kind == "judge"]

    def unknown_message(self, unknown_ids):
        """'Unknown scorer(s): x. Built-in scorers: …. Configured judge criteria: ….'"""
        unknown = ", ".join(str(i) for i in unknown_ids)
        built_in = ", ".join(SCORERS)
        criteria = self.criteria_ids
        judged = ", ".join(criteria) if criteria else "none (the project's judge is not configured or has no criteria)"
        noun = "scorer" if len(unknown_ids) == 1 else "scorers"
        return f"Unknown {noun}: {unknown}. Built-in scorers: {built_in}. Configured judge criteria: {judged}."

    def sync_judge_cap(self, criteria_count):
        return judge_run_cap(settings.EVALSITE_REQUEST_TIMEOUT_SECONDS, self.judge.timeout_seconds, criteria_count)

    @property
    def pass_judge_cap(self):
        return settings.EVALSITE_JUDGE_PASS_MAX_RUNS


def catalog_for(project):
    """The project's ``Catalog`` (one query: its judge)."""
    judge = judge_get(project)
    scorers = dict(SCORERS)
    if judge is not None:
        scorers.update(scorers_from_judge(judge))
    return Catalog(scorers=scorers, judge=judge)


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
