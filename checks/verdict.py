"""The gate's verdict, as pure functions (no Django): what passes a case, what blocks a gate.

A case:
- *passes* when every gating check passed;
- *fails* when a gating check failed, or when no run was recorded for it;
- is *unmeasured* when no gating check failed but at least one abstained: nothing says it
  is wrong, nothing says it is right. It is not a pass.

The gate is FAIL when any of these holds (each adds one line to ``blocked_by``):
1. the dataset has no active case;
2. no case could be measured;
3. the pass rate (passed cases / measured cases) is below the floor; with the default
   floor of 1.0 one failed case fails the gate: there is no partial PASS;
4. more cases are unmeasured than the policy's ``max_abstained`` allows;
5. the policy fails on regression and a *decidable* comparison with the baseline
   regressed on a gating scorer (an undecidable one never blocks: four runs are noise).
Otherwise it is PASS. Unmeasured cases stay out of the pass rate and are counted beside
it, like abstentions everywhere else.

The floor only ratchets up: a PASS recorded as the new baseline whose pass rate beats
the floor raises the floor to that pass rate.
"""

from dataclasses import dataclass, field

from checks.scorers import scorer_get

PASSED, FAILED, ABSTAINED = "passed", "failed", "abstained"

NO_RUN_REASON = "no run recorded for this case"


@dataclass
class Check:
    scorer: str
    status: str  # passed | failed | abstained
    reason: str = ""
    detail: dict = field(default_factory=dict)

    @property
    def category(self):
        if self.status == ABSTAINED and self.detail.get("exception"):
            return "error"
        spec = scorer_get(self.scorer)
        return spec.category if spec is not None else "judge"

    def as_dict(self):
        return {"scorer": self.scorer, "status": self.status, "reason": self.reason, "detail": self.detail}


@dataclass
class CaseVerdict:
    passed: bool
    measured: bool
    failed_checks: list
    reasons: list


def case_decide(checks, *, has_run):
    """Whether a case passed, was measured, which categories failed and why (one line each)."""
    if not has_run:
        return CaseVerdict(passed=False, measured=True, failed_checks=["error"], reasons=[NO_RUN_REASON])
    failed = [c for c in checks if c.status == FAILED]
    abstained = [c for c in checks if c.status == ABSTAINED]
    categories = []
    for check in failed + abstained:
        if check.category not in categories:
            categories.append(check.category)
    reasons = [f"{c.scorer}: {c.reason}" for c in failed]
    reasons += [_unmeasured_reason(c) for c in abstained]
    return CaseVerdict(
        passed=not failed and not abstained,
        measured=bool(failed) or not abstained,
        failed_checks=categories,
        reasons=reasons,
    )


def _unmeasured_reason(check):
    message = check.detail.get("message")
    return f"{check.scorer} not measured ({check.reason})" + (f": {message}" if message else "")


@dataclass
class GateVerdict:
    passed: bool
    passed_cases: int
    total_cases: int
    measured_cases: int
    unmeasured_cases: int
    pass_rate: float | None
    blocked_by: list

    @property
    def verdict(self):
        return "PASS" if self.passed else "FAIL"


def gate_decide(case_verdicts, *, floor, max_abstained, regressed_scorers=(), fail_on_regression=True):
    """The gate's verdict from each case's verdict and the regressions found (see the module rules)."""
    total = len(case_verdicts)
    measured = [c for c in case_verdicts if c.measured]
    passed = sum(1 for c in measured if c.passed)
    unmeasured = total - len(measured)
    pass_rate = passed / len(measured) if measured else None
    blocked_by = []
    if total == 0:
        blocked_by.append("the dataset has no active case")
    elif not measured:
        blocked_by.append("no case could be measured")
    elif pass_rate < floor - 1e-12:
        blocked_by.append(f"pass rate {pass_rate:.3f} is below the floor {floor:.3f}")
    if unmeasured > max_abstained:
        blocked_by.append(f"{unmeasured} cases could not be measured; the policy allows {max_abstained}")
    if fail_on_regression:
        blocked_by.extend(f"{scorer} regressed against the baseline" for scorer in regressed_scorers)
    return GateVerdict(
        passed=not blocked_by,
        passed_cases=passed,
        total_cases=total,
        measured_cases=len(measured),
        unmeasured_cases=unmeasured,
        pass_rate=pass_rate,
        blocked_by=blocked_by,
    )


def ratcheted_floor(*, floor, ratchet, verdict, set_baseline):
    """The floor after a verdict: raised to the pass rate of a PASS recorded as baseline, never lowered."""
    if ratchet and set_baseline and verdict.passed and verdict.pass_rate is not None and verdict.pass_rate > floor:
        return verdict.pass_rate
    return floor
