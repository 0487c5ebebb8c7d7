"""The gate's rules, one by one (checks.verdict is pure)."""

from checks.verdict import (
    NO_CHECK_REASON,
    NO_RUN_REASON,
    Check,
    case_decide,
    gate_decide,
    ratcheted_floor,
    trials_decide,
)


def _case(*statuses, has_run=True):
    checks = [Check(f"scorer_{i}", status, "why") for i, status in enumerate(statuses)]
    return case_decide(checks, has_run=has_run)


def test_a_case_passes_only_when_every_gating_check_passed():
    assert _case("passed", "passed").passed
    assert not _case("passed", "failed").passed


def test_a_case_with_no_run_fails_and_says_so():
    verdict = _case(has_run=False)
    assert not verdict.passed and verdict.measured
    assert verdict.reasons == [NO_RUN_REASON] and verdict.failed_checks == ["error"]


def test_a_case_whose_gating_check_abstained_is_unmeasured_not_passed():
    verdict = _case("passed", "abstained")
    assert not verdict.passed and not verdict.measured


def test_a_failure_beside_an_abstention_is_a_measured_failure():
    verdict = _case("failed", "abstained")
    assert not verdict.passed and verdict.measured


def test_failed_checks_are_categorised_once_each():
    checks = [
        Check("tool_choice", "failed", "wrong tool"),
        Check("tool_output", "failed", "hours"),
        Check("cost_budget", "failed", "over"),
        Check("latency_budget", "failed", "slow"),
        Check("answer_relevance", "failed", "judge said no"),
        Check("tool_output_schema", "abstained", "target_tool_not_called"),
    ]
    verdict = case_decide(checks, has_run=True)
    assert verdict.failed_checks == ["tool_choice", "output", "threshold", "judge"]
    assert verdict.unmeasured_checks == ["schema"]
    assert verdict.reasons[0] == "tool_choice: wrong tool"


def test_one_broken_case_breaks_the_batch_at_floor_one():
    cases = [_case("passed")] * 4 + [_case("failed")]
    verdict = gate_decide(cases, floor=1.0, max_abstained=0)
    assert not verdict.passed
    assert (verdict.passed_cases, verdict.total_cases, verdict.pass_rate) == (4, 5, 0.8)
    assert verdict.blocked_by == ["pass rate 0.800 is below the floor 1.000"]


def test_a_pass_rate_at_the_floor_passes():
    cases = [_case("passed")] * 4 + [_case("failed")]
    assert gate_decide(cases, floor=0.8, max_abstained=0).passed


def test_unmeasured_cases_stay_out_of_the_pass_rate_and_count_against_max_abstained():
    cases = [_case("passed")] * 4 + [_case("abstained")]
    strict = gate_decide(cases, floor=1.0, max_abstained=0)
    assert not strict.passed and strict.pass_rate == 1.0 and strict.unmeasured_cases == 1
    assert strict.blocked_by == ["1 cases could not be measured; the policy allows 0"]
    assert gate_decide(cases, floor=1.0, max_abstained=1).passed


def test_a_decidable_regression_blocks_only_when_the_policy_says_so():
    cases = [_case("passed")] * 3
    assert not gate_decide(cases, floor=1.0, max_abstained=0, regressed_scorers=["tool_choice"]).passed
    assert gate_decide(
        cases, floor=1.0, max_abstained=0, regressed_scorers=["tool_choice"], fail_on_regression=False
    ).passed


def test_an_empty_dataset_or_nothing_measured_is_a_fail():
    assert gate_decide([], floor=1.0, max_abstained=0).blocked_by == ["the dataset has no active case"]
    only_unmeasured = gate_decide([_case("abstained")], floor=0.0, max_abstained=5)
    assert not only_unmeasured.passed and only_unmeasured.blocked_by == ["no case could be measured"]


def test_the_ratchet_raises_the_floor_to_a_pass_recorded_as_baseline_and_never_lowers_it():
    passing = gate_decide([_case("passed")] * 9 + [_case("failed")], floor=0.8, max_abstained=0)
    assert ratcheted_floor(floor=0.8, ratchet=True, verdict=passing, set_baseline=True) == 0.9
    assert ratcheted_floor(floor=0.8, ratchet=True, verdict=passing, set_baseline=False) == 0.8
    assert ratcheted_floor(floor=0.8, ratchet=False, verdict=passing, set_baseline=True) == 0.8
    assert ratcheted_floor(floor=0.95, ratchet=True, verdict=passing, set_baseline=True) == 0.95
    failing = gate_decide([_case("failed")], floor=0.0, max_abstained=0)
    assert ratcheted_floor(floor=0.0, ratchet=True, verdict=failing, set_baseline=True) == 0.0


# --- trials ------------------------------------------------------------------------------


def _trials(*outcomes, required=1, ratio=1.0):
    return trials_decide([_case(o) for o in outcomes], required=required, pass_ratio=ratio)


def test_one_trial_at_the_default_policy_is_exactly_the_trials_verdict():
    for outcome in ("passed", "failed", "abstained"):
        single, case = _case(outcome), _trials(outcome)
        assert (case.passed, case.measured, case.failed_checks, case.unmeasured_checks, case.reasons) == (
            single.passed, single.measured, single.failed_checks, single.unmeasured_checks, single.reasons,
        )  # fmt: skip
        assert (case.trials, case.flaky) == (int(single.measured), False)


def test_every_trial_must_pass_at_ratio_one_and_a_mixed_case_is_flaky():
    case = _trials("passed", "failed", "passed", required=3)
    assert (case.passed, case.measured, case.flaky) == (False, True, True)
    assert (case.trials, case.passed_trials, case.shown) == (3, 2, 1)
    assert case.reasons == ["2 of 3 trials passed; the policy needs 3", "scorer_0: why"]
    assert case.failed_checks == ["judge"]


def test_a_lower_ratio_lets_a_flaky_case_pass_and_it_is_still_flaky():
    case = _trials("passed", "failed", "passed", required=3, ratio=0.6)
    assert (case.passed, case.flaky, case.failed_checks, case.reasons) == (True, True, [], [])
    assert not _trials("passed", "failed", "failed", required=3, ratio=0.6).passed


def test_fewer_recorded_trials_than_required_leave_the_case_unmeasured():
    case = _trials("passed", "passed", required=3)
    assert (case.passed, case.measured) == (False, False)
    assert case.reasons[0] == "2 of 3 trials recorded"


def test_an_abstained_trial_is_neither_passed_nor_failed_and_can_leave_the_case_unmeasured():
    case = _trials("passed", "abstained", "passed", required=3)
    assert (case.measured, case.trials, case.passed_trials) == (False, 2, 2)
    assert case.reasons[0] == "2 of 3 trials measured"
    assert case.unmeasured_checks == ["judge"]
    enough = _trials("passed", "abstained", "passed", required=2)
    assert (enough.passed, enough.trials) == (True, 2)


def test_a_case_with_no_run_fails_whatever_the_trials_asked():
    case = trials_decide([], required=3)
    assert (case.passed, case.measured, case.reasons, case.failed_checks) == (False, True, [NO_RUN_REASON], ["error"])


def test_more_flaky_cases_than_the_policy_allows_fail_the_gate():
    cases = [_trials("passed", "failed", "passed", required=3, ratio=0.6)] * 2 + [
        _trials("passed", "passed", "passed", required=3)
    ]
    assert gate_decide(cases, floor=1.0, max_abstained=0, k=3).passed
    verdict = gate_decide(cases, floor=1.0, max_abstained=0, max_flaky=1, k=3)
    assert not verdict.passed and verdict.flaky_cases == 2
    assert verdict.blocked_by == ["2 cases are flaky; the policy allows 1"]


def test_pass_at_1_and_pass_hat_k_are_means_over_measured_cases():
    cases = [_trials("passed", "passed", "passed", required=3), _trials("passed", "failed", "passed", required=3)]
    verdict = gate_decide(cases, floor=0.0, max_abstained=0, k=3)
    assert verdict.pass_at_1 == (1 + 2 / 3) / 2
    assert verdict.pass_hat_k == (1 + 0) / 2  # C(2, 3) = 0: two passes cannot make three in a row
    two_of_four = trials_decide([_case(o) for o in ("passed", "failed", "passed", "passed")], required=2)
    assert gate_decide([two_of_four], floor=0.0, max_abstained=0, k=2).pass_hat_k == 3 / 6  # C(3,2)/C(4,2)


def test_it_leaves_a_case_with_no_gating_check_unmeasured_never_passed():
    verdict = case_decide([], has_run=True)
    assert (verdict.passed, verdict.measured) == (False, False)
    assert verdict.reasons == [NO_CHECK_REASON]
    assert not gate_decide([verdict], floor=0.0, max_abstained=0).passed


def test_it_leaves_a_trial_whose_input_differs_unmeasured_whatever_its_checks_say():
    verdict = case_decide([Check("contains", "passed", "ok")], has_run=True, input_differs=True)
    assert (verdict.passed, verdict.measured, verdict.reasons) == (False, False, ["input differs from the case's"])


def test_it_counts_a_superseded_failure_towards_flaky_but_not_towards_pass_hat_k():
    retried = trials_decide([_case("passed")], earlier=[_case("failed")])
    assert (retried.passed, retried.flaky, retried.passed_trials, retried.trials) == (True, True, 1, 1)
    assert not trials_decide([_case("passed")], earlier=[_case("passed")]).flaky
    assert not trials_decide([_case("passed")], earlier=[_case("abstained")]).flaky
    assert not gate_decide([retried], floor=1.0, max_abstained=0, max_flaky=0).passed
