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

import gc
import hashlib
import math
import time
from contextlib import contextmanager
from dataclasses import dataclass

import orjson

from checks.scorers import READS, Abstain, Result, RunView, config_hash, resolve_config, score_run

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


@dataclass(slots=True)  # not frozen: made once per distinct config of every plan, and never changed
class Resolved:
    config: object  # dict, or None when the scorer needs config and has none
    config_hash: str
    config_json: str


# A run linked to no case: what a scorer is configured with when its case says nothing.
_NO_CASE = RunView(
    trace_id="", input=None, output=None, status="ok", error=None, latency_ms=None, cost_cents=None, spans=()
)
# Canonical hash and stored JSON of each distinct config content, shared by every plan of
# the process: a worker scores the same cases' configs chunk after chunk (trials, gates,
# passes again). Bounded by the bytes it holds, not by its entries: a case's config
# carries its expected answer and schema, a few kilobytes each, and a pass over a
# million cases must not keep them all.
_HASHED = {}
_HASHED_BYTES = [0]
_HASHED_MAX_BYTES = 16 * 1024 * 1024


def _hashed_keep(content, hashed):
    # A copy of the key of its own size: orjson's output keeps the buffer it grew in
    # (4 KiB at least), which a million kept keys would make 4 GiB.
    key = bytes(memoryview(content))
    size = len(key) + len(hashed[1]) + 250  # key, stored text, hash and the entry
    if _HASHED_BYTES[0] + size > _HASHED_MAX_BYTES:
        _HASHED.clear()
        _HASHED_BYTES[0] = 0
    _HASHED[key] = hashed
    _HASHED_BYTES[0] += size


_PLAIN = (str, int, bool, type(None))


def _plain(config):
    """Whether orjson's sorted JSON of ``config`` is its canonical JSON (``config_hash``'s text).

    It is for a dict with string keys whose values are strings, integers, booleans,
    null or lists of those (most configs): both write them alike, with sorted keys and
    no spaces. Floats (1.0 is canonically 1) and anything nested take the long way.
    """
    if type(config) is not dict:
        return False
    for key, value in config.items():
        if type(key) is not str:
            return False
        kind = type(value)
        if kind is list:
            if not all(type(item) in _PLAIN for item in value):
                return False
        elif kind not in _PLAIN:
            return False
    return True


class ScoringPlan:
    """The scorers of a request, each with its request config, resolved per run (cached per case).

    ``scorers`` holds ``Scorer``s, configured by ``request_config[scorer.id]``, or
    ``(Scorer, config)`` pairs: one scorer may be named twice with two configs, and each
    gives its own scores (their config hashes differ). When a linked case configures
    the scorer, the case wins for both, and the run is scored once.
    """

    def __init__(self, scorers, request_config=None):
        self.request_config = dict(request_config or {})
        self.entries = tuple(
            item if isinstance(item, tuple) else (item, self.request_config.get(item.id)) for item in scorers
        )
        self.scorers = tuple({scorer.id: scorer for scorer, _ in self.entries}.values())
        self._by_content = {}
        self._by_case = {}
        # Each entry resolved once for a run whose case does not configure it; only the
        # entries a case can configure are resolved again per case.
        ids = [scorer.id for scorer, _ in self.entries]
        self._slots = tuple(
            (
                scorer,
                self._hashed(resolve_config(scorer, config, _NO_CASE)),
                scorer.fixed_config is None and scorer.case_config is not None,
                ids.count(scorer.id) > 1,
            )
            for scorer, config in self.entries
        )
        # Two entries of one scorer with the same config (a case's, or alike) are one.
        self._defaults_repeat = len({(s.id, default.config_hash) for s, default, *_ in self._slots}) < len(ids)

    def _hashed(self, config):
        """``Resolved`` for ``config``, hashed once per distinct config content.

        Cases that differ often configure a scorer the same way (the same required
        substring, no schema: the request's config), and hashing is the costly part.
        """
        try:
            content = orjson.dumps(config, option=orjson.OPT_SORT_KEYS)
        except TypeError:  # not plain JSON: hashed as it is, not shared
            return Resolved(config, config_hash(config), orjson.dumps(config if config is not None else {}).decode())
        resolved = self._by_content.get(content)
        if resolved is None:
            hashed = _HASHED.get(content)
            if hashed is None:
                digest = hashlib.sha256(content).hexdigest() if _plain(config) else config_hash(config)
                hashed = (digest, orjson.dumps(config if config is not None else {}).decode())
                _hashed_keep(content, hashed)
            resolved = Resolved(config, *hashed)
            self._by_content[content] = resolved
        return resolved

    def for_run(self, run):
        """``[(scorer, Resolved)]`` for every entry of the plan on ``run``, cached per case content."""
        pairs = self._by_case.get(run.case_key)
        if pairs is None:
            pairs = self._pairs(run.view)
            self._by_case[run.case_key] = pairs
        return pairs

    def _pairs(self, view):
        pairs = []
        repeats = self._defaults_repeat
        for scorer, default, by_case, repeated in self._slots:
            from_case = scorer.case_config(view) if by_case and view.has_case else None
            if from_case is None:
                pairs.append((scorer, default))
            else:
                pairs.append((scorer, self._hashed(from_case)))
                repeats = repeats or repeated
        if repeats:  # a case that configures a scorer named twice makes the two one
            unique = {}
            for scorer, resolved in pairs:
                unique.setdefault((scorer.id, resolved.config_hash), (scorer, resolved))
            pairs = list(unique.values())
        return pairs

    @property
    def reads(self):
        """What of a run's spans the plan's scorers read (``checks.scorers.READS``): what to load."""
        return max((scorer.reads for scorer in self.scorers), key=READS.index, default="nothing")

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
        if type(value) is float and (value == 1.0 or value == 0.0):  # a verdict: on the scale
            return outcome
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
    with _cyclic_gc_paused():
        return _outcomes(plan, runs, decided, deadline)


@contextmanager
def _cyclic_gc_paused():
    """No cyclic garbage collection inside.

    A batch builds tens of thousands of outcomes next to the loaded runs, and each
    collection the allocations set off would scan them all again: that was most of the
    engine's time. What a batch builds is freed by reference counting as ever; a rare
    cycle (a scorer's exception) waits for the next full collection. A thread that
    paused it turns it back on only if it was on when that thread came in.

    The outcomes outlive the batch (they are written next), so before the collector is
    turned back on they are moved to its oldest generation with everything else it
    tracks (``gc.freeze`` then ``gc.unfreeze``: a move of lists, nothing scanned).
    Otherwise the young collection that turning it on sets off at once scans each of
    them, a sixth of the engine's time.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.freeze()
            gc.unfreeze()
            gc.enable()


def _outcomes(plan, runs, decided, deadline):
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
    """An abstention or skip as the API answers it: ``{trace_id, scorer, config_hash, kind, reason, detail}``."""
    return {
        "trace_id": outcome.run.trace_id,
        "scorer": outcome.scorer_id,
        "config_hash": outcome.config_hash,
        "kind": outcome.kind,
        "reason": outcome.result.reason,
        "detail": outcome.result.detail,
    }
