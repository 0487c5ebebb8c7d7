"""pass^k, Wilson intervals and McNemar's exact test, against brute force and published tables."""

import itertools
import math

import pytest

from checks.stats import mcnemar_p, pass_at_1, pass_hat_k, wilson_interval


@pytest.mark.parametrize(
    ("n", "c", "k"), [(n, c, k) for n in range(1, 7) for c in range(n + 1) for k in range(1, n + 1)]
)
def test_pass_hat_k_is_the_share_of_k_subsets_of_the_trials_that_all_passed(n, c, k):
    trials = [True] * c + [False] * (n - c)
    subsets = list(itertools.combinations(range(n), k))
    brute = sum(all(trials[i] for i in subset) for subset in subsets) / len(subsets)
    assert pass_hat_k(n, c, k) == pytest.approx(brute)


def test_pass_hat_k_needs_k_trials_and_pass_at_1_is_the_share():
    assert pass_hat_k(2, 2, 3) is None
    assert (pass_at_1(3, 2), pass_at_1(0, 0)) == (2 / 3, None)


@pytest.mark.parametrize(
    ("successes", "n", "low", "high"),
    # Wilson 95% intervals as published (Newcombe 1998, table I) and computed by statsmodels' proportion_confint.
    [
        (81, 263, 0.2553, 0.3662),
        (15, 148, 0.0624, 0.1605),
        (0, 20, 0.0, 0.1611),
        (1, 29, 0.0061, 0.1718),
        (10, 10, 0.7225, 1.0),
    ],
)
def test_wilson_interval_matches_the_published_values(successes, n, low, high):
    assert wilson_interval(successes, n) == (pytest.approx(low, abs=5e-4), pytest.approx(high, abs=5e-4))
    assert wilson_interval(0, 0) == (None, None)


@pytest.mark.parametrize(
    ("b", "c", "p"),
    # Exact two-sided McNemar p-values: 2 * P(X <= min(b, c)), X ~ Bin(b + c, 1/2).
    [
        (0, 0, 1.0),
        (1, 1, 1.0),
        (0, 5, 0.0625),
        (1, 9, 0.021484375),
        (2, 8, 0.109375),
        (10, 3, 0.092285156),
        (0, 12, 0.00048828125),
    ],
)
def test_mcnemar_exact_p_values_match_the_binomial_table(b, c, p):
    assert mcnemar_p(b, c) == pytest.approx(p, rel=1e-6)
    assert mcnemar_p(c, b) == mcnemar_p(b, c)


def test_mcnemar_agrees_with_the_binomial_sum_written_out():
    b, c = 7, 19
    tail = sum(math.comb(26, i) for i in range(8)) / 2**26
    assert mcnemar_p(b, c) == pytest.approx(2 * tail)
