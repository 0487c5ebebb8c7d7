"""How a monitor decides, pure: the interval of its window and the state that follows.

A monitor watches one number of the runs in a moving window: a rate (the share of runs
that passed a scorer, of end-user feedback that was positive, of runs that errored) or
a percentile (p95 of latency or cost). It must stay on one side of ``target``:
``above`` (a pass rate) or ``below`` (an error rate, a latency).

- **Interval.** A rate gets the 95% Wilson interval of its count
  (``checks.stats.wilson_interval``). A percentile gets the distribution-free 95%
  interval from order statistics (``percentile_ranks``): the number of runs below the
  true p-quantile is Binomial(n, p), so the k-th smallest value is below it with
  probability P(Bin(n, p) ≥ k); the ranks are the widest whose tails stay within 2.5%.
  With too few runs a bound does not exist (``None``: unbounded), e.g. the upper bound
  of a p95 needs at least 72 runs.
- **Decision** (``monitor_decide``). Fewer than ``min_runs`` runs: nothing is decidable;
  a firing monitor keeps firing, any other is ``insufficient``. Otherwise it **fires**
  only when the whole interval is on the wrong side of the target, and **resolves** only
  when the whole interval is back on the right side; an interval across the target
  keeps a firing monitor firing and leaves any other ``ok`` (hysteresis: a noisy rate
  near its target neither fires nor flaps).
"""

import math
from dataclasses import dataclass

from checks.stats import wilson_interval

OK, FIRING, INSUFFICIENT = "ok", "firing", "insufficient"
ABOVE, BELOW = "above", "below"
TAIL = 0.025


@dataclass(frozen=True)
class Reading:
    """One look at a window: ``n`` runs, the point ``value``, its interval (``None``: unbounded)."""

    n: int
    value: float | None
    low: float | None
    high: float | None


def rate_reading(successes, n):
    """The share ``successes / n`` with its Wilson 95% interval."""
    if n == 0:
        return Reading(0, None, None, None)
    low, high = wilson_interval(successes, n)
    return Reading(n, successes / n, low, high)


def _binomial_cdfs(n, p):
    """``[P(Bin(n, p) ≤ j) for j in 0..n]`` in one pass, each term from logarithms (no
    overflow of C(n, j) nor underflow of p**j for a large window)."""
    log_p, log_q, log_n = math.log(p), math.log1p(-p), math.lgamma(n + 1)
    total, cdfs = 0.0, []
    for j in range(n + 1):
        total += math.exp(log_n - math.lgamma(j + 1) - math.lgamma(n - j + 1) + j * log_p + (n - j) * log_q)
        cdfs.append(min(total, 1.0))
    return cdfs


def percentile_ranks(n, p):
    """``(point, low, high)``: 1-based ranks of the sorted values for the p-quantile of ``n`` values.

    ``point`` is the nearest-rank estimate (``ceil(p·n)``); ``low`` the largest rank with
    P(Bin(n, p) ≤ low − 1) ≤ 2.5%, ``high`` the smallest with P(Bin(n, p) ≥ high) ≤ 2.5%;
    either is ``None`` when no rank of ``n`` values is far enough out (unbounded).
    """
    if n == 0:
        return None, None, None
    point = min(n, max(1, math.ceil(p * n)))
    cdfs = _binomial_cdfs(n, p)
    below = [rank for rank in range(1, point + 1) if cdfs[rank - 1] <= TAIL]
    above = [rank for rank in range(point, n + 1) if 1 - cdfs[rank - 1] <= TAIL]
    return point, (below[-1] if below else None), (above[0] if above else None)


def _wrong_side(reading, target, direction):
    if direction == ABOVE:
        return reading.high is not None and reading.high < target
    return reading.low is not None and reading.low > target


def _right_side(reading, target, direction):
    if direction == ABOVE:
        return reading.low is not None and reading.low >= target
    return reading.high is not None and reading.high <= target


def monitor_decide(*, state, reading, target, direction, min_runs):
    """The monitor's next state (``ok``, ``firing`` or ``insufficient``) after ``reading``."""
    if reading.n < min_runs:
        return FIRING if state == FIRING else INSUFFICIENT
    if _wrong_side(reading, target, direction):
        return FIRING
    if state == FIRING and not _right_side(reading, target, direction):
        return FIRING
    return OK
