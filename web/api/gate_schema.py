"""The shapes of the gate's answers, for the OpenAPI schema (docs/gate.md is the prose).

Response serializers only: the views answer the stored verdict as it is, these describe
it so a generated client gets typed objects. No component forbids extra properties, so
a newer server's additions do not break an older client.
"""

from drf_spectacular.utils import inline_serializer
from rest_framework import serializers

from checks.input_match import INPUT_MATCH_MODES
from gating.models import GateRun
from web.api.experiments import ScorerComparisonRows
from web.api.shapes import Flipped, GateTrial, shaped

_CHECK_STATUSES = ["passed", "failed", "abstained"]
_CATEGORIES = "tool_choice, tool_args, schema, output, threshold, judge, error"


class GateCheck(serializers.Serializer):
    scorer = serializers.CharField()
    status = serializers.ChoiceField(_CHECK_STATUSES)
    reason = serializers.CharField(allow_blank=True)
    detail = serializers.DictField(help_text="The evidence (actual tools, schema errors, mismatches, ...).")


class GateAttempt(serializers.Serializer):
    trace_id = serializers.CharField()
    passed = serializers.BooleanField(allow_null=True, help_text="null: the run could not be measured.")


class GateRetry(serializers.Serializer):
    trial = serializers.IntegerField()
    superseded = GateAttempt(help_text="The earlier run, which failed (not counted for pass^k).")
    counted = GateAttempt(help_text="The run that replaced it.")


class GateCaseRetry(GateRetry):
    case = serializers.CharField(help_text="The case's name.")


class GateCase(serializers.Serializer):
    name = serializers.CharField()
    case_id = serializers.IntegerField()
    case_version = serializers.IntegerField()
    trace_id = serializers.CharField(allow_null=True, help_text="The run judged; null when none was recorded.")
    run_url = serializers.URLField(allow_null=True, help_text="The run's page; null when no run was recorded.")
    passed = serializers.BooleanField(help_text="Every gating check passed.")
    measured = serializers.BooleanField(help_text="False when no check failed but one abstained.")
    actual_tools = serializers.ListField(child=serializers.CharField())
    tool_choice_ok = serializers.BooleanField()
    schema_errors = serializers.ListField(child=serializers.CharField())
    schema_checked = serializers.BooleanField(help_text="False: the schema was never checked (not a pass).")
    output_errors = serializers.ListField(child=serializers.CharField())
    output_checked = serializers.BooleanField()
    cost_cents = serializers.FloatField(allow_null=True)
    cost_ok = serializers.BooleanField()
    latency_ms = serializers.IntegerField(allow_null=True)
    latency_ok = serializers.BooleanField()
    checks = GateCheck(many=True, help_text="Every gating check, in report order.")
    failed_checks = serializers.ListField(
        child=serializers.CharField(), help_text=f"Categories of the failed checks: {_CATEGORIES}."
    )
    unmeasured_checks = serializers.ListField(
        child=serializers.CharField(), required=False, help_text="Categories of the checks that abstained."
    )
    reasons = serializers.ListField(child=serializers.CharField(), help_text="One line per failed or unmeasured check.")
    quarantined = serializers.BooleanField(help_text="A quarantined case is reported, never counted.")
    tool_calls_ok = serializers.BooleanField()
    tool_call_errors = serializers.ListField(
        child=serializers.CharField(), help_text="Every mismatch of the calls' arguments, in words."
    )
    answer_checked = serializers.BooleanField(
        help_text="False: an expected answer that no gating check reads (no answer_check, regex or none)."
    )
    trials = serializers.IntegerField(help_text="Trials measured.")
    passed_trials = serializers.IntegerField()
    flaky = serializers.BooleanField(
        help_text="Some measured trials passed and some failed, counting runs a re-sent trial superseded."
    )
    trial_results = GateTrial(
        many=True, help_text="Each trial in order: its run, outcome (null: unmeasured), categories."
    )
    superseded = serializers.ListField(
        child=serializers.CharField(), help_text="Runs a later run of the same trial replaced (not counted)."
    )
    retried = GateRetry(
        many=True, required=False,
        help_text="Trials re-sent after a failure: the failed run beside the one that replaced it (the case is flaky).",
    )  # fmt: skip
    advisory_checks = GateCheck(
        many=True, required=False, help_text="Checks of judge criteria not calibrated enough to gate (reported only)."
    )


_BaselineOut = inline_serializer(
    "GateBaseline",
    {
        "experiment": serializers.CharField(),
        "pass_rate": serializers.FloatField(allow_null=True, help_text="Its latest gate run's; null if never gated."),
    },
    allow_null=True,
)


class BarMove(serializers.Serializer):
    kind = serializers.ChoiceField(["policy", "floor", "case", "judge"])
    what = serializers.CharField(help_text="The move in words: `trial_pass_ratio 1.0 → 0.2`, `case 'x' quarantined`.")
    by = serializers.CharField(help_text="Who: a user, `key NAME`, or how (ratchet).")
    at = serializers.DateTimeField()
    reason = serializers.CharField(allow_blank=True)
    revision = serializers.IntegerField(required=False, help_text="The policy revision (kind policy).")


class GateInputMismatch(serializers.Serializer):
    case = serializers.CharField(help_text="The case's name.")
    trace_id = serializers.CharField(help_text="The run attached to it.")


class GateVerdict(serializers.Serializer):
    """A finished gate run: the verdict and the evidence of every case (docs/gate.md)."""

    gate_run_id = serializers.IntegerField()
    status = serializers.ChoiceField([GateRun.Status.DONE])
    url = serializers.URLField(help_text="The gate run's page.")
    dataset = serializers.CharField()
    experiment = serializers.CharField()
    verdict = serializers.ChoiceField(["PASS", "FAIL"])
    passed = serializers.BooleanField()
    passed_cases = serializers.IntegerField()
    total_cases = serializers.IntegerField()
    measured_cases = serializers.IntegerField()
    unmeasured_cases = serializers.IntegerField()
    pass_rate = serializers.FloatField(allow_null=True, help_text="Passed / measured cases; null when none was.")
    floor = serializers.FloatField(help_text="The policy's min_pass_rate.")
    max_abstained = serializers.IntegerField()
    k = serializers.IntegerField(help_text="The policy's trials: the k of pass_hat_k.")
    trial_pass_ratio = serializers.FloatField()
    max_flaky = serializers.IntegerField(allow_null=True)
    pass_at_1 = serializers.FloatField(allow_null=True, help_text="Mean over measured cases of passed / trials.")
    pass_hat_k = serializers.FloatField(allow_null=True, help_text="Mean over measured cases of C(c, k) / C(n, k).")
    flaky_cases = serializers.IntegerField()
    flaky = serializers.ListField(child=serializers.CharField(), help_text="Names of the flaky cases.")
    quarantined_cases = serializers.IntegerField()
    unchecked_answers = serializers.ListField(
        child=serializers.CharField(), help_text="Cases with an expected answer no answer_check checks."
    )
    advisory = serializers.ListField(
        child=serializers.CharField(), help_text="Judge criteria that advise but do not gate, and why."
    )
    input_match = serializers.ChoiceField(INPUT_MATCH_MODES, help_text="The policy's input_match.")
    retried = GateCaseRetry(
        many=True,
        help_text="Every trial re-sent after a failure, by case: still evidence, each such case is flaky.",
    )
    input_mismatches = GateInputMismatch(
        many=True,
        help_text="Counted runs whose input does not contain their case's input: attached to the wrong case? "
        "Unmeasured under input_match: require; not looked for under off.",
    )
    baseline_recorded = serializers.BooleanField()
    floor_initialised = serializers.BooleanField()
    baseline = _BaselineOut
    delta = serializers.FloatField(allow_null=True, help_text="pass_rate minus the baseline's.")
    blocked_by = serializers.ListField(child=serializers.CharField(), help_text="Why the verdict is FAIL.")
    comparison = ScorerComparisonRows
    flipped = shaped(serializers.DictField, Flipped, "FlippedField")(
        allow_null=True, help_text="Cases that flipped pass→fail and fail→pass."
    )
    policy_revision = serializers.IntegerField(
        allow_null=True,
        help_text="The policy revision the verdict was decided under (null: recorded before revisions).",
    )
    bar_moved = BarMove(
        many=True,
        help_text="Each loosening of the policy, floor move, case archived, quarantined or that lost a check, and "
        "judge change since the baseline was recorded (without a baseline: since the previous gate run), newest first.",
    )
    bar_moved_more = serializers.IntegerField(help_text="Moves beyond the ones listed.")
    cases = GateCase(
        many=True,
        help_text="At most EVALSITE_GATE_ANSWER_CASES (100) gating cases, in report order: the failing ones are "
        "chosen first, then passing ones while there is room. The rest: `cases_next`.",
    )
    cases_next = serializers.URLField(
        allow_null=True,
        help_text="GET it for the gating cases `cases` leaves out (GateCasePage, failures first, then `next`); "
        "null when `cases` holds them all.",
    )
    quarantined = GateCase(
        many=True,
        help_text="Results of the quarantined cases (run, scored, not counted): a page, as `cases`.",
    )
    quarantined_next = serializers.URLField(
        allow_null=True, help_text="The quarantined cases `quarantined` leaves out, as `cases_next`; null when none."
    )


class GateCasePage(serializers.Serializer):
    """A page of a gate run's cases (GET gate-runs/{id}/cases)."""

    next = serializers.URLField(allow_null=True, help_text="The next page, or null on the last one.")
    results = GateCase(many=True)


class GateRunPending(serializers.Serializer):
    """A gate run a worker is still evaluating (``running``), or one that failed (``failed``, with ``error``)."""

    gate_run_id = serializers.IntegerField()
    status = serializers.ChoiceField([GateRun.Status.RUNNING, GateRun.Status.FAILED])
    url = serializers.URLField(help_text="The gate run's page.")
    dataset = serializers.CharField()
    experiment = serializers.CharField()
    error = serializers.CharField(required=False, help_text="Why it failed (status failed only).")


GateAccepted = inline_serializer(
    "GateAccepted",
    {
        "gate_run_id": serializers.IntegerField(),
        "status": serializers.ChoiceField([GateRun.Status.RUNNING]),
        "url": serializers.URLField(help_text="The gate run's page."),
        "dataset": serializers.CharField(),
        "experiment": serializers.CharField(),
    },
)


class PolicyFieldChange(serializers.Serializer):
    field = serializers.CharField()
    old = serializers.JSONField()
    new = serializers.JSONField()
    loosens = serializers.BooleanField(help_text="The change can turn a FAIL into a PASS.")


class PolicyRevisionOut(serializers.Serializer):
    revision = serializers.IntegerField()
    at = serializers.DateTimeField()
    author = serializers.CharField(help_text="A user's name, `key NAME`, or `gate run N (key NAME)`.")
    source = serializers.CharField(help_text="api, page, admin or gate.")
    reason = serializers.CharField(allow_blank=True)
    loosens = serializers.BooleanField()
    changes = PolicyFieldChange(many=True)
    gate_run_id = serializers.IntegerField(allow_null=True)
