"""The gate's verdict, as pure functions (no Django): what passes a case, what blocks a gate.

One trial (one run of a case):
- it *passes* when every gating check passed;
- it *fails* when a gating check failed;
- it is *unmeasured* when no gating check failed but at least one abstained: nothing
  says it is wrong, nothing says it is right. It is not a pass;
- it is *unmeasured* when its input does not contain its case's input and the policy's
  ``input_match`` is ``require`` ("input differs from the case's"): whatever its checks
  say, they say it about another question (``checks.input_match``);
- it is *unmeasured* when no gating check applies to it at all (no expectation, no
  policy scorer, or only advisory ones): "no check applies to this case". A case
  nothing checks is never a pass.
``failed_checks`` lists the categories of the failed checks only; the categories of
the checks that abstained are ``unmeasured_checks``.

A case, over its trials (all its runs in the experiment; usually one):
- with no run recorded it *fails* ("no run recorded for this case");
- with fewer measured trials than the policy's ``trials`` it is *unmeasured*
  ("2 of 3 trials recorded", or "measured" when some abstained);
- otherwise it *passes* when at least ``trial_pass_ratio`` of its measured trials passed
  (1.0, the default: every one, which is pass^k) and *fails* otherwise;
- it is *flaky* when some of its measured trials passed and some failed, counting the
  runs a re-sent trial superseded (``earlier``): a failure retried into a pass is still a
  flaky case, though only the counted run of each trial enters pass^k.
Its seed fields and reasons come from its first failing trial, or its last one.

The gate is FAIL when any of these holds (each adds one line to ``blocked_by``):
1. the dataset has no active case;
2. no case could be measured;
3. the pass rate (passed cases / measured cases) is below the floor; with the default
   floor of 1.0 one failed case fails the gate: there is no partial PASS;
4. more cases are unmeasured than the policy's ``max_abstained`` allows;
5. more cases are flaky than the policy's ``max_flaky`` allows (when it sets one);
6. the policy fails on regression and a *decidable* comparison with the baseline
   regressed on a gating scorer (an undecidable one never blocks: four runs are noise).
Otherwise it is PASS. Unmeasured cases stay out of the pass rate and are counted beside
it, like abstentions everywhere else. Quarantined cases are left out of the verdict by
the caller: they are reported, never counted.

Beside the pass rate: ``pass_at_1`` (the mean over measured cases of passed / measured
trials) and ``pass_hat_k`` (the mean of ``C(c, k) / C(n, k)``, ``k`` the policy's trials).

The floor only ratchets up: a PASS recorded as the new baseline whose pass rate beats
the floor raises the floor to that pass rate. The first baseline may set it where the
project stands (``init_floor``, pass or fail).
"""

from dataclasses import dataclass, field

from checks.input_match import INPUT_DIFFERS_REASON
from checks.scorers import scorer_get
from checks.stats import pass_hat_k

PASSED, FAILED, ABSTAINED = "passed", "failed", "abstained"
NO_RUN_REASON = "no run recorded for this case"
NO_CHECK_REASON = "no check applies to this case"
_RATIO_SLACK = 1e-9


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
        if isinstance(self.detail.get("category"), str):
            return self.detail["category"]  # a scorer that checks two things says which one failed
        spec = scorer_get(self.scorer)
        return spec.category if spec is not None else "judge"

    def as_dict(self):
        return {"scorer": self.scorer, "status": self.status, "reason": self.reason, "detail": self.detail}


@dataclass
class CaseVerdict:
    """One trial's verdict."""

    passed: bool
    measured: bool
    failed_checks: list
    reasons: list
    unmeasured_checks: list = field(default_factory=list)


def _categories(checks):
    out = []
    for check in checks:
        if check.category not in out:
            out.append(check.category)
    return out


def case_decide(checks, *, has_run=True, input_differs=False):
    """Whether one trial passed, was measured, which categories failed or abstained, and why.

    ``input_differs``: the run's input does not hold its case's and the policy requires it to.
    """
    if not has_run:
        return CaseVerdict(passed=False, measured=True, failed_checks=["error"], reasons=[NO_RUN_REASON])
    if input_differs:
        return CaseVerdict(
            passed=False, measured=False, failed_checks=[], reasons=[INPUT_DIFFERS_REASON], unmeasured_checks=["input"]
        )
    if not checks:
        return CaseVerdict(passed=False, measured=False, failed_checks=[], reasons=[NO_CHECK_REASON])
    failed = [c for c in checks if c.status == FAILED]
    abstained = [c for c in checks if c.status == ABSTAINED]
    reasons = [f"{c.scorer}: {c.reason}" for c in failed]
    reasons += [_unmeasured_reason(c) for c in abstained]
    return CaseVerdict(
        passed=not failed and not abstained,
        measured=bool(failed) or not abstained,
        failed_checks=_categories(failed),
        reasons=reasons,
        unmeasured_checks=_categories(abstained),
    )


def _unmeasured_reason(check):
    message = check.detail.get("message")
    return f"{check.scorer} not measured ({check.reason})" + (f": {message}" if message else "")


@dataclass
class CaseTrials:
    """A case's verdict over its trials (see the module rules)."""

    passed: bool
    measured: bool
    failed_checks: list
    unmeasured_checks: list
    reasons: list
    recorded: int  # trials recorded
    trials: int  # trials measured
    passed_trials: int
    flaky: bool
    shown: int | None  # index of the trial whose seed fields are reported (None: no run)


def trials_decide(trial_verdicts, *, required=1, pass_ratio=1.0, earlier=()):
    """A case's ``CaseTrials`` from its trials' verdicts, in trial order.

    ``earlier``: the verdicts of the runs later runs of the same trials superseded; they
    count only towards ``flaky``.
    """
    if not trial_verdicts:
        return CaseTrials(False, True, ["error"], [], [NO_RUN_REASON], 0, 0, 0, False, None)
    measured = [v for v in trial_verdicts if v.measured]
    n, c = len(measured), sum(v.passed for v in measured)
    attempts = [v.passed for v in (*measured, *earlier) if v.measured]
    failing = next((i for i, v in enumerate(trial_verdicts) if v.measured and not v.passed), None)
    shown = failing if failing is not None else len(trial_verdicts) - 1
    base = trial_verdicts[shown]
    flaky = any(attempts) and not all(attempts)
    counts = {"recorded": len(trial_verdicts), "trials": n, "passed_trials": c, "flaky": flaky, "shown": shown}
    if n < required:
        if required == 1:
            return CaseTrials(False, False, [], base.unmeasured_checks, base.reasons, **counts)
        what = "recorded" if len(trial_verdicts) < required else "measured"
        done = len(trial_verdicts) if what == "recorded" else n
        unmeasured = _merged(v.unmeasured_checks for v in trial_verdicts) or ["trials"]
        reasons = [f"{done} of {required} trials {what}", *base.reasons]
        return CaseTrials(False, False, [], unmeasured, reasons, **counts)
    if c >= pass_ratio * n - _RATIO_SLACK:
        return CaseTrials(True, True, [], [], [] if n > 1 else base.reasons, **counts)
    reasons = base.reasons if len(trial_verdicts) == 1 else [_trials_reason(n, c, pass_ratio), *base.reasons]
    return CaseTrials(False, True, base.failed_checks, base.unmeasured_checks, reasons, **counts)


def _merged(lists):
    out = []
    for items in lists:
        out.extend(item for item in items if item not in out)
    return out


def _trials_reason(n, c, pass_ratio):
    needed = n if pass_ratio >= 1 else f"{pass_ratio:g} of them"
    return f"{c} of {n} trials passed; the policy needs {needed}"


@dataclass
class GateVerdict:
    passed: bool
    passed_cases: int
    total_cases: int
    measured_cases: int
    unmeasured_cases: int
    pass_rate: float | None
    blocked_by: list
    pass_at_1: float | None = None
    pass_hat_k: float | None = None
    flaky_cases: int = 0

    @property
    def verdict(self):
        return "PASS" if self.passed else "FAIL"


def gate_decide(cases, *, floor, max_abstained, regressed_scorers=(), fail_on_regression=True, max_flaky=None, k=1):
    """The gate's verdict from each case's verdict (``CaseTrials`` or ``CaseVerdict``) and the regressions."""
    total = len(cases)
    measured = [c for c in cases if c.measured]
    passed = sum(1 for c in measured if c.passed)
    unmeasured = total - len(measured)
    flaky = sum(1 for c in cases if getattr(c, "flaky", False))
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
    if max_flaky is not None and flaky > max_flaky:
        blocked_by.append(f"{flaky} cases are flaky; the policy allows {max_flaky}")
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
        pass_at_1=_mean([_trial_share(c) for c in measured]),
        pass_hat_k=_mean([_hat(c, k) for c in measured]),
        flaky_cases=flaky,
    )


def _trial_share(case):
    trials = getattr(case, "trials", None)
    if trials is None:
        return 1.0 if case.passed else 0.0
    return case.passed_trials / trials if trials else 0.0


def _hat(case, k):
    trials = getattr(case, "trials", None)
    if trials is None:
        return 1.0 if case.passed else 0.0
    value = pass_hat_k(trials, case.passed_trials, k)
    return 0.0 if value is None else value


def _mean(values):
    return sum(values) / len(values) if values else None


def ratcheted_floor(*, floor, ratchet, verdict, set_baseline):
    """The floor after a verdict: raised to the pass rate of a PASS recorded as baseline, never lowered."""
    if ratchet and set_baseline and verdict.passed and verdict.pass_rate is not None and verdict.pass_rate > floor:
        return verdict.pass_rate
    return floor
