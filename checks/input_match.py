"""Whether a run answers the case it is attached to: its input contains the case's input.

Both inputs are read as text (a structured input as its canonical JSON text: sorted
keys, no spaces), case-folded, with every run of whitespace made one space. The run's
input must contain the case's: a harness may wrap the case's input in a prompt, but a
run whose input does not hold it at all was most likely attached to the wrong case. A
case with no input (null or blank) is contained in every run.
"""

from checks.scorers.values import canonical_json

INPUT_MATCH_MODES = ("warn", "require", "off")
INPUT_DIFFERS_REASON = "input differs from the case's"


def input_folded(value):
    """``value`` as the text the comparison reads: JSON text for a structured value, folded."""
    if value is None:
        return ""
    text = value if isinstance(value, str) else canonical_json(value)
    return " ".join(text.casefold().split())


def input_contains(run_input, case_input):
    """True when the run's input contains the case's input (see the module rules)."""
    return input_folded(case_input) in input_folded(run_input)
