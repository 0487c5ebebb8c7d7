"""Every field of a gate policy, declared once.

``POLICY_TABLE`` says, per field, its kind, its bounds, whether it may be null, its
help text, the label it carries on the dataset page, and which direction of change
*loosens* the gate (can turn a FAIL into a PASS; ``gating.revisions``). The API's input
and output serializers, the OpenAPI description and the page's form are built from it
(``web.api.policy_io``, ``web.pages.policy``); the model (``gating.models.GatePolicy``)
keeps the storage, and a test holds the two in step.

Kinds: ``float``, ``int``, ``bool``, ``choice`` (one of ``choices``), ``scorers`` (a
list of scorer ids) and ``experiment`` (an experiment's name; the model stores it as a
foreign key).
"""

from dataclasses import dataclass

from checks.input_match import INPUT_MATCH_MODES

COUNT_MAX = 1_000_000


def _lower(old, new):
    return new < old


def _higher(old, new):
    return new > old


def _none_loosest_higher(old, new):
    return old is not None and (new is None or new > old)


def _none_loosest_lower(old, new):
    return old is not None and (new is None or new < old)


def _turned_off(old, new):
    return bool(old) and not new


def _removed(old, new):
    return bool(set(old) - set(new))


# input_match from strictest to loosest.
_INPUT_MATCH_STRICTNESS = {"require": 2, "warn": 1, "off": 0}


def _less_strict(old, new):
    return _INPUT_MATCH_STRICTNESS.get(new, 0) < _INPUT_MATCH_STRICTNESS.get(old, 0)


@dataclass(frozen=True)
class PolicyField:
    """One field of a gate policy (see the module's docstring)."""

    name: str
    kind: str
    # (old, new) -> whether the change loosens the gate; None: decided elsewhere (the baseline).
    loosens: object = None
    minimum: float | None = None
    maximum: float | None = None
    # An exclusive lower bound, checked after the inclusive ones, with its message.
    above: float | None = None
    above_message: str = ""
    nullable: bool = False
    choices: tuple = ()
    max_length: int | None = None
    # The API's description of the field in a request, and in an answer.
    help: str = ""
    out_help: str = ""
    # The label on the dataset page's form; None: not edited there.
    label: str | None = None

    def out(self, policy):
        """The field's value in an answer about ``policy``."""
        value = getattr(policy, self.name)
        if self.kind == "experiment":
            return value.name if value is not None else None
        return value


POLICY_TABLE = (
    PolicyField(
        "min_pass_rate", "float", _lower, minimum=0, maximum=1,
        help="The floor (default 1.0). Cannot be lowered here.", out_help="The floor.",
        label="Floor (min pass rate)",
    ),
    PolicyField("ratchet", "bool", _turned_off, label="Ratchet the floor up on a better baseline"),
    PolicyField("fail_on_regression", "bool", _turned_off, label="Fail on a decidable regression"),
    PolicyField("tolerance", "float", _higher, minimum=0, maximum=1, label="Regression tolerance"),
    PolicyField(
        "scorers", "scorers", _removed, max_length=100, help="Extra gating scorers.", out_help="Extra gating scorers.",
        label="Extra gating scorers (comma-separated)",
    ),
    PolicyField("max_abstained", "int", _higher, minimum=0, maximum=COUNT_MAX, label="Unmeasured cases allowed"),
    PolicyField(
        "trials", "int", _lower, minimum=1, maximum=100,
        help="Trials each case needs (default 1); fewer: unmeasured.", label="Trials per case",
    ),
    PolicyField(
        "trial_pass_ratio", "float", _lower, minimum=0, maximum=1,
        above=0, above_message="must be more than 0 (1.0: every trial must pass)",
        help="Share of a case's measured trials that must pass (0 < r <= 1, default 1.0: every one, pass^k).",
        label="Trial pass ratio",
    ),
    PolicyField(
        "max_flaky", "int", _none_loosest_higher, minimum=0, maximum=COUNT_MAX, nullable=True,
        help="Flaky cases tolerated before the gate fails (default null: no limit).",
        label="Flaky cases allowed (empty: no limit)",
    ),
    PolicyField(
        "judge_min_kappa", "float", _none_loosest_lower, minimum=-1, maximum=1, nullable=True,
        help="A judge criterion gates only with at least this Cohen's kappa against reviewers' labels "
        "(default null: always gates); below it, its checks are advisory.",
        label="Judge gates from kappa (empty: always)",
    ),
    PolicyField(
        "judge_min_labels", "int", _lower, minimum=1, maximum=COUNT_MAX,
        help="Labelled runs a criterion's kappa must rest on before it gates (default 30).",
        label="Labels a judge's kappa rests on",
    ),
    PolicyField(
        "input_match", "choice", _less_strict, choices=INPUT_MATCH_MODES,
        help="A run whose input does not contain its case's input (whitespace and case folded): warn (the "
        "default) lists it under input_mismatches, require also leaves that trial unmeasured, off does not look.",
        out_help="warn, require or off.", label="A run whose input is not its case's",
    ),
    PolicyField(
        "baseline", "experiment", None, nullable=True, max_length=200,
        help="Baseline experiment name.", out_help="The baseline experiment's name.",
    ),
)  # fmt: skip

POLICY_FIELDS = tuple(f.name for f in POLICY_TABLE)
POLICY_FIELD_BY_NAME = {f.name: f for f in POLICY_TABLE}
# The fields kept as plain values (a project archive carries them; the baseline is a link).
POLICY_VALUE_FIELDS = tuple(f.name for f in POLICY_TABLE if f.kind != "experiment")


def change_loosens(name, old, new):
    """Whether changing field ``name`` from ``old`` to ``new`` loosens the gate (not for the baseline)."""
    return bool(POLICY_FIELD_BY_NAME[name].loosens(old, new))


def policy_values(policy):
    """``{field: value}`` of ``policy`` in the table's order, as an answer carries them."""
    return {f.name: f.out(policy) for f in POLICY_TABLE}
