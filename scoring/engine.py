"""Compute what a scoring request asks of a batch of loaded runs. Pure: no database.

``ScoringPlan`` holds the scorers and the request's config; it resolves each scorer's
config for a run (the linked case wins, ARCHITECTURE §5) and hashes it once per
(scorer, case content) rather than once per score. ``outcomes_compute`` runs every scorer on
every run, except the (run, scorer, version, config) keys already decided (a score is
stored, or this pass already recorded an abstention), and returns one ``Outcome`` each:

- a ``Result`` to write as a score,
- an ``Abstain``: the scorer could not measure the run (kind ``abstained``),
- a ``Skip``: the pass did not get a score for another reason (kind ``skipped``):
  ``deadline`` when the request ran out of time before the scorer ran; the writer adds
  ``quota`` and ``run_changed``.

``outcome_compute`` is the one place a built-in scorer is called on a run. Judge
criteria (``kind == "judge"``) are left out here: their calls are made concurrently by
``scoring.judge.criteria.outcomes_judge``.
"""

import math
import time
from dataclasses import dataclass

import orjson

from checks.scorers import Abstain, Result, config_hash, resolve_config, score_run

SOURCE_BUILTIN = "builtin"


@dataclass(frozen=True, slots=True)
class Skip:
    reason: str
    detail: dict


@dataclass(slots=True)
class Outcome:
    run: object  # LoadedRun
    scorer_id: str
    version: str
    config_hash: str
    config_json: str
    result: object  # Result | Abstain | Skip
    source: str = SOURCE_BUILTIN

    @property
    def key(self):
        return (self.run.pk, self.scorer_id, self.version, self.config_hash)

    @property
    def is_score(self):
        return isinstance(self.result, Result)

    @property
    def kind(self):
        return "skipped" if isinstance(self.result, Skip) else "abstained"

    def skipped_as(self, reason, message, **detail):
        """This outcome, not written: a skip with ``reason`` (a computed score is kept in the detail)."""
        if isinstance(self.result, Result):
            detail["score"] = {"value": self.result.value, "passed": self.result.passed, "reason": self.result.reason}
        return Outcome(
            self.run,
            self.scorer_id,
            self.version,
            self.config_hash,
            self.config_json,
            Skip(reason, {"message": message, **detail}),
            self.source,
        )


@dataclass(frozen=True, slots=True)
class Resolved:
    config: object  # dict, or None when the scorer needs config and has none
    config_hash: str
    config_json: str


class ScoringPlan:
    """The scorers of a request and their config, resolved per run (cached per case)."""

    def __init__(self, scorers, request_config):
        self.scorers = tuple(scorers)
        self.request_config = dict(request_config or {})
        self._resolved = {}
        self._by_content = {}
        self._by_case = {}

    def resolve(self, scorer, run):
        """The config ``scorer`` runs with on ``run`` (a ``LoadedRun``), with its hash."""
        # The config depends only on the request and the linked case's content, so one
        # resolution per (scorer, case content) serves every run of those cases.
        key = (scorer.id, run.case_key if scorer.case_config is not None else None)
        resolved = self._resolved.get(key)
        if resolved is None:
            resolved = self._hashed(scorer, resolve_config(scorer, self.request_config.get(scorer.id), run.view))
            self._resolved[key] = resolved
        return resolved

    def _hashed(self, scorer, config):
        """``Resolved`` for ``config``, hashed once per distinct config of ``scorer``.

        Cases that differ often configure a scorer the same way (the same required
        substring, no schema: the request's config), and hashing is the costly part.
        """
        try:
            content = (scorer.id, orjson.dumps(config, option=orjson.OPT_SORT_KEYS))
        except TypeError:  # not plain JSON: hashed as it is, not shared
            content = None
        resolved = self._by_content.get(content) if content is not None else None
        if resolved is None:
            resolved = Resolved(
                config, config_hash(config), orjson.dumps(config if config is not None else {}).decode()
            )
            if content is not None:
                self._by_content[content] = resolved
        return resolved

    def for_run(self, run):
        """``[(scorer, Resolved)]`` for every scorer of the plan on ``run``, cached per case content."""
        pairs = self._by_case.get(run.case_key)
        if pairs is None:
            pairs = [(scorer, self.resolve(scorer, run)) for scorer in self.scorers]
            self._by_case[run.case_key] = pairs
        return pairs

    def keys(self, runs):
        """Every (trace pk, scorer, version, config hash) key this plan would score on ``runs``."""
        return [
            (run.pk, scorer.id, scorer.version, resolved.config_hash)
            for run in runs
            for scorer, resolved in self.for_run(run)
        ]


def outcome_compute(scorer, run, config):
    """One scorer on one run: a ``Result`` or an ``Abstain``, never an exception.

    A result off the 0..1 scale (or not a number) becomes ``scorer_error``: a score
    the database would refuse must not break the batch it is written with.
    """
    outcome = score_run(scorer, run.view, config)
    if isinstance(outcome, Result):
        value = outcome.value
        if isinstance(value, bool) or not isinstance(value, int | float) or not (0 <= value <= 1) or math.isnan(value):
            return Abstain(
                "scorer_error", {"message": f"{scorer.id} returned a value off the 0..1 scale: {value!r}"[:1000]}
            )
    return outcome


def outcomes_compute(plan, runs, *, decided=None, deadline=None):
    """Outcomes of every scorer of ``plan`` on every run, skipping the ``decided`` keys.

    ``decided`` maps keys already decided to whether they count as ``existing``
    (stored before this pass) or not (this pass decided them on an earlier attempt).
    Returns ``(outcomes, already)`` where ``already`` counts the ``existing`` keys
    skipped. ``deadline`` is a ``time.monotonic()`` value: runs not started before it
    get a ``deadline`` skip for each scorer.
    """
    outcomes = []
    already = 0
    append = outcomes.append
    for run in runs:
        late = deadline is not None and time.monotonic() >= deadline
        for scorer, resolved in plan.for_run(run):
            if scorer.kind == "judge":
                continue  # called concurrently by scoring.judge.criteria.outcomes_judge
            if decided:
                counts = decided.get((run.pk, scorer.id, scorer.version, resolved.config_hash))
                if counts is not None:
                    already += counts
                    continue
            if late:
                result = Skip("deadline", {"message": "the request ran out of time before this run was scored"})
            else:
                result = outcome_compute(scorer, run, resolved.config)
            append(Outcome(run, scorer.id, scorer.version, resolved.config_hash, resolved.config_json, result))
    return outcomes, already


def score_as_dict(outcome, experiment_names=None):
    """A written (or would-be) score as the API answers it; ``experiment_names`` maps ids to names."""
    result = outcome.result
    return {
        "trace_id": outcome.run.trace_id,
        "scorer": outcome.scorer_id,
        "scorer_version": outcome.version,
        "value": result.value,
        "passed": result.passed,
        "reason": result.reason,
        "detail": result.detail,
        "config_hash": outcome.config_hash,
        "source": outcome.source,
        "experiment": (experiment_names or {}).get(outcome.run.experiment_id),
        "case": outcome.run.case_id,
    }


def skip_as_dict(outcome):
    """An abstention or skip as the API answers it: ``{trace_id, scorer, kind, reason, detail}``."""
    return {
        "trace_id": outcome.run.trace_id,
        "scorer": outcome.scorer_id,
        "kind": outcome.kind,
        "reason": outcome.result.reason,
        "detail": outcome.result.detail,
    }
