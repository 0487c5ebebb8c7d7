"""The LLM judge: configured per project, called over OpenAI-compatible chat completions.

The pure part (no Django; importable anywhere, tested against a real local server):

- ``spec``: ``Judge`` (the configuration as an immutable value), ``judge_from``,
  ``judge_scorer_version`` (the model), ``judge_score_config`` (what a score is stored with).
- ``prompt``: the messages for one criterion and one run.
- ``client``: one HTTP POST, bounded by a total deadline and 1 MiB.
- ``replies``: a score and a reason out of the reply, or the abstention that says why not.
- ``scorer``: ``judge_score``, a run and a criterion to ``Result | Abstain``.
- ``runner``: ``judge_many``, many calls at once, each outcome handed over as it finishes.
- ``limits``: ``judge_run_cap``, the deadline arithmetic of synchronous requests.
- ``validation``: the rules a configuration must meet.

The Django part: ``services`` (``judge_configure``, the only writer of the
configuration), ``selectors`` (the project's judge, its criteria, the valid scorer ids
and the unknown-scorer message), ``planning`` (the caps with the server's settings),
``forms``, ``admin`` and ``views`` (the project admins' settings page). They are
imported by their module path; this package's namespace stays free of Django.
docs/judge.md is the reference.
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
