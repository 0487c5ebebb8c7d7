"""How a monitor decides (checks.monitoring): only when the interval is wholly on one side."""

import pytest

from checks.monitoring import (
    ABOVE,
    BELOW,
    FIRING,
    INSUFFICIENT,
    OK,
    Reading,
    monitor_decide,
    percentile_ranks,
    rate_reading,
)


def decide(state, successes, n, *, target, direction=ABOVE, min_runs=30):
    return monitor_decide(
        state=state, reading=rate_reading(successes, n), target=target, direction=direction, min_runs=min_runs
    )


def test_it_does_not_fire_on_five_bad_runs_of_eight_below_min_runs():
    assert decide(OK, 3, 8, target=0.9) == INSUFFICIENT


def test_it_keeps_firing_when_too_few_runs_to_decide_a_resolution():
    assert decide(FIRING, 8, 8, target=0.9) == FIRING


@pytest.mark.parametrize("direction", [ABOVE, BELOW])
def test_it_does_not_fire_on_a_noisy_rate_near_its_target(direction):
    # 36 of 50 is 0.72: the interval (about 0.58 to 0.83) holds 0.7 on both sides.
    assert decide(OK, 36, 50, target=0.7, direction=direction) == OK


def test_it_fires_on_sixty_failing_runs_of_two_hundred_against_a_target_of_0_9():
    assert decide(OK, 140, 200, target=0.9) == FIRING


def test_it_fires_from_insufficient_once_enough_runs_are_bad():
    assert decide(INSUFFICIENT, 140, 200, target=0.9) == FIRING


def test_it_keeps_firing_while_the_interval_still_holds_the_target():
    # 0.87 of 200: not decidably bad any more, not decidably good either.
    assert decide(FIRING, 174, 200, target=0.9) == FIRING


def test_it_resolves_once_the_interval_is_wholly_back_above_the_target():
    assert decide(FIRING, 196, 200, target=0.9) == OK


def test_a_rate_that_must_stay_below_fires_when_its_interval_is_wholly_above():
    assert decide(OK, 40, 200, target=0.05, direction=BELOW) == FIRING
    assert decide(FIRING, 2, 200, target=0.05, direction=BELOW) == OK


def test_the_percentile_interval_brackets_the_point_with_binomial_tails():
    point, low, high = percentile_ranks(200, 0.95)
    assert point == 190
    assert low < point < high <= 200
    # The order statistics of a p95 of 200 runs: ranks 184 to 197: P(Bin(200, 0.95) < 184) and P(≥ 197) are each under 2.5%.
    assert (low, high) == (184, 197)


def test_the_upper_bound_of_a_p95_does_not_exist_below_72_runs():
    assert percentile_ranks(71, 0.95)[2] is None
    assert percentile_ranks(72, 0.95)[2] == 72


def test_the_percentile_interval_of_a_large_window_is_computed_and_narrow():
    point, low, high = percentile_ranks(200_000, 0.95)
    assert point == 190_000
    # About ±1.96·sqrt(n·p·(1-p)) ≈ ±191 ranks.
    assert 189_780 < low < 189_830 and 190_170 < high < 190_220


def test_a_latency_fires_only_when_its_lower_bound_is_above_the_target():
    slow = Reading(n=200, value=2500.0, low=2100.0, high=None)
    near = Reading(n=200, value=2050.0, low=1900.0, high=2300.0)
    assert monitor_decide(state=OK, reading=slow, target=2000, direction=BELOW, min_runs=30) == FIRING
    assert monitor_decide(state=OK, reading=near, target=2000, direction=BELOW, min_runs=30) == OK
    # Resolving needs an upper bound: an unbounded interval keeps it firing.
    assert monitor_decide(state=FIRING, reading=Reading(50, 100.0, 90.0, None), target=2000, direction=BELOW,
                          min_runs=30) == FIRING  # fmt: skip
