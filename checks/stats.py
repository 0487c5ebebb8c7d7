"""The few statistics the gate and the comparison report, exact and pure.

- ``pass_hat_k(n, c, k)``: the chance that ``k`` trials drawn without replacement from
  ``n`` recorded trials, ``c`` of which passed, all pass: ``C(c, k) / C(n, k)``. The
  unbiased estimator of pass^k (τ-bench): an agent must succeed ``k`` times in a row.
- ``pass_at_1(n, c)``: ``c / n``.
- ``wilson_interval(successes, n)``: the 95% Wilson score interval of a proportion
  (sound near 0 and 1 and for small ``n``, where the normal interval is not).
- ``mcnemar_p(b, c)``: the exact two-sided McNemar test on the discordant pairs of a
  paired comparison (``b`` cases went pass→fail, ``c`` fail→pass): under "no change"
  each discordant case flips either way with probability 1/2, so the p-value is the
  two-sided binomial tail ``min(1, 2 · P(X ≤ min(b, c)))`` with ``X ~ Bin(b + c, 1/2)``.
- ``win_rate(wins, losses, ties)``: pairwise review's win rate, ties left out, with its
  Wilson interval.
"""

import math

Z_95 = 1.959963984540054


def pass_at_1(n, c):
    return c / n if n else None


def pass_hat_k(n, c, k):
    """``C(c, k) / C(n, k)``; None when fewer than ``k`` trials were recorded."""
    if k < 1 or n < k:
        return None
    return math.comb(c, k) / math.comb(n, k)


def wilson_interval(successes, n, z=Z_95):
    """``(low, high)`` of the Wilson score interval; ``(None, None)`` for ``n == 0``."""
    if n == 0:
        return None, None
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def mcnemar_p(b, c):
    """Exact two-sided McNemar p-value for ``b`` and ``c`` discordant pairs (1.0 when there are none)."""
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(b, c) + 1)) / 2**n
    return min(1.0, 2 * tail)


def win_rate(wins, losses, ties):
    """``{wins, losses, ties, n, decisive, win_rate, ci95}`` of pairwise judgements.

    Ties are left out of the rate: ``win_rate = wins / (wins + losses)``, with the Wilson
    95% interval over those ``decisive`` judgements (a tie says neither side is better, so
    it moves neither the rate nor its certainty). ``n`` counts every judgement, ties too.
    ``win_rate`` and ``ci95`` are None when no judgement was decisive.
    """
    decisive = wins + losses
    low, high = wilson_interval(wins, decisive)
    return {
        "wins": wins,
        "losses": losses,
        "ties": ties,
        "n": decisive + ties,
        "decisive": decisive,
        "win_rate": wins / decisive if decisive else None,
        "ci95": [low, high] if decisive else None,
    }
