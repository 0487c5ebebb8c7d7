"""The LLM judge's pure half: called over OpenAI-compatible chat completions, no Django.

Importable anywhere and tested against a real local server:

- ``spec``: ``Judge`` (the configuration as an immutable value), ``judge_from``,
  ``judge_scorer_version`` (the model), ``judge_score_config`` (what a score is stored with).
- ``prompt``: the messages for one criterion and one run.
- ``client``: one HTTP POST through httpx, bounded by a total deadline and 1 MiB.
- ``retries``: that POST tried again on 429 and 5xx, within the judge's timeout.
- ``structured``: the verdict's JSON schema as ``response_format``, and servers that refuse it.
- ``calls``: one judge call as the scorer sees it, built from the three above.
- ``replies``: a score and a reason out of the reply, or the abstention that says why not.
- ``scorer``: ``judge_score``, a run and a criterion to ``Result | Abstain``.
- ``runner``: ``judge_many``, many calls at once, each outcome handed over as it finishes.
- ``limits``: ``judge_run_cap``, the deadline arithmetic of synchronous requests.
- ``validation``: the rules a configuration must meet.

The Django half (the stored configuration, its one writer ``judge_configure``, the
caps with the server's settings, the forms) is ``scoring.judge``. docs/judge.md is the reference.
"""

from .limits import judge_run_cap
from .runner import judge_many
from .scorer import judge_score
from .spec import PASS_THRESHOLD, Judge, judge_from, judge_score_config, judge_scorer_version

__all__ = [
    "PASS_THRESHOLD",
    "Judge",
    "judge_from",
    "judge_many",
    "judge_run_cap",
    "judge_score",
    "judge_score_config",
    "judge_scorer_version",
]
