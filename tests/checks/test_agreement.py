"""Agreement between reviewers against textbook values (checks.agreement)."""

import pytest

from checks.agreement import INTERVAL, NOMINAL, agreement_figure, cohens_kappa, krippendorff_alpha

# Krippendorff's reliability data (Krippendorff 1980; "Computing Krippendorff's Alpha-Reliability", 2011):
# four observers, twelve units, None where an observer gave no value.
OBSERVERS = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]
UNITS = [[o[u] for o in OBSERVERS if o[u] is not None] for u in range(12)]


def test_krippendorffs_reliability_example_nominal_is_0_743():
    assert krippendorff_alpha(UNITS, NOMINAL) == pytest.approx(0.743, abs=0.0005)


def test_krippendorffs_reliability_example_interval_is_0_849():
    assert krippendorff_alpha(UNITS, INTERVAL) == pytest.approx(0.849, abs=0.0005)


def test_krippendorffs_binary_example_of_two_observers_is_0_095():
    a = [0, 1, 0, 0, 0, 0, 0, 0, 1, 0]
    b = [1, 1, 1, 0, 0, 1, 0, 0, 0, 0]
    assert krippendorff_alpha([[x, y] for x, y in zip(a, b, strict=True)]) == pytest.approx(0.095, abs=0.0005)
    # Kappa by hand: p_o = 6/10, p_e = 0.2 * 0.4 + 0.8 * 0.6 = 0.56, kappa = 0.04 / 0.44 = 1/11.
    assert cohens_kappa(zip(a, b, strict=True)) == pytest.approx(1 / 11)


def test_cohens_kappa_of_a_two_by_two_table_by_hand():
    # 50 items: both yes 20, yes/no 5, no/yes 10, both no 15. p_o = 35/50 = 0.7; the first says yes
    # 25 times, the second 30: p_e = 0.5 * 0.6 + 0.5 * 0.4 = 0.5; kappa = (0.7 - 0.5) / 0.5 = 0.4.
    pairs = [("yes", "yes")] * 20 + [("yes", "no")] * 5 + [("no", "yes")] * 10 + [("no", "no")] * 15
    assert cohens_kappa(pairs) == pytest.approx(0.4)


def test_undefined_figures_are_none():
    assert cohens_kappa([]) is None
    assert cohens_kappa([(True, True)] * 5) is None, "every label the same: chance explains everything"
    assert krippendorff_alpha([[1], [2]]) is None, "no unit has two values"
    assert krippendorff_alpha([[1, 1], [1, 1]]) is None


def test_perfect_and_opposite_agreement():
    assert cohens_kappa([(True, True), (False, False)] * 3) == pytest.approx(1.0)
    assert cohens_kappa([(True, False), (False, True)] * 3) == pytest.approx(-1.0)
    assert krippendorff_alpha([[1, 1, 1], [2, 2, 2], [3, 3]], INTERVAL) == pytest.approx(1.0)


def test_the_figure_is_kappa_for_two_reviewers_and_alpha_for_more():
    two = {1: {"ann": True, "bo": True}, 2: {"ann": False, "bo": True}, 3: {"ann": False, "bo": False}, 4: {"ann": 1}}
    figure = agreement_figure(two)
    assert (figure.method, figure.items, figure.reviewers) == ("kappa", 3, 2)
    assert figure.value == pytest.approx(cohens_kappa([(True, True), (False, True), (False, False)]))
    three = {u: {f"r{i}": v for i, v in enumerate(values)} for u, values in enumerate(UNITS)}
    figure = agreement_figure(three)
    assert (figure.method, figure.items, figure.reviewers) == ("alpha-nominal", 11, 4)
    assert figure.value == pytest.approx(0.743, abs=0.0005)
    numbers = agreement_figure(two | {5: {"ann": 2, "bo": 3}}, metric=INTERVAL)
    assert numbers.method == "alpha-interval"


def test_an_unknown_metric_is_refused():
    with pytest.raises(ValueError, match="ordinal"):
        krippendorff_alpha([[1, 2]], "ordinal")
