"""Which scorers a project may name in a scoring request, and what an unknown id gets.

``scorers_available(project=...)`` is the one list of valid scorer ids: the 13
built-in scorers and the 3 agent checks of ``checks.scorers``, then the project's
configured judge criteria (``scoring.judge.criteria.JudgeCriterion``), so the unknown-id
message, the pass services, the gate and the API all see them at once.
``GET /v1/api/scorers`` lists only the built-ins (``scorers_describe``), as
ARCHITECTURE §5 says: the unknown-id message is the one place criteria are named back.
"""

from checks.scorers import SCORERS
from scoring.judge.criteria import scorers_from_judge
from scoring.judge.selectors import judge_get, unknown_scorer_message


def scorers_available(*, project):
    """``{id: Scorer}`` of every scorer ``project`` may name, in listing order."""
    available = dict(SCORERS)
    judge = judge_get(project)
    if judge is not None:
        available.update(scorers_from_judge(judge))
    return available


def scorer_unknown_message(project, scorer_id):
    return unknown_scorer_message(project, [scorer_id])


def requires_request_config(scorer):
    """Whether naming ``scorer`` without config (and without cases) is a 400.

    A scorer that needs config gets it from the request or from a linked case. The
    exception is a scorer whose only missing input is the expected answer
    (``exact_match``): it abstains ``no_expected_output`` instead, so a pass over runs
    without a reference says so run by run rather than refusing the whole request.
    """
    return scorer.needs_config and scorer.missing_reason != "no_expected_output"
