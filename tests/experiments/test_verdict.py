"""The gate's rules, one by one (checks.verdict is pure)."""

from checks.verdict import NO_RUN_REASON, Check, case_decide, gate_decide, ratcheted_floor


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
    assert verdict.failed_checks == ["tool_choice", "output", "threshold", "judge", "schema"]
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
