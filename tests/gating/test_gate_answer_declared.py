"""The gate's answer and its documented shape (web/api/gate_schema.py) cannot drift apart.

The verdict is stored JSON whose key order the CI client reads as it is, so it is not
re-written by a serializer; instead every key a real answer carries must be a declared
field, and every field a verdict must carry must be in it (a case's, likewise).
"""

from tests.gating.test_gate import CLEAN, _gate, _upload, dataset  # noqa: F401  (a fixture)
from web.api.gate_schema import GateCase, GateVerdict


def _required(serializer):
    return {name for name, field in serializer.fields.items() if field.required}


def test_every_key_of_a_verdict_and_of_its_cases_is_declared_and_every_required_field_is_there(actors, dataset):  # noqa: F811
    _upload(actors, "v1", {"quote_focus_pro_3h": CLEAN})
    answer = _gate(actors, experiment="v1").json()
    assert answer["verdict"] == "FAIL"  # the second case has no run
    assert set(answer) <= set(GateVerdict().fields), set(answer) - set(GateVerdict().fields)
    assert _required(GateVerdict()) <= set(answer), _required(GateVerdict()) - set(answer)
    for case in answer["cases"]:
        assert set(case) <= set(GateCase().fields), set(case) - set(GateCase().fields)
        assert _required(GateCase()) <= set(case), _required(GateCase()) - set(case)
    stored = actors.api().get(f"/v1/api/gate-runs/{answer['gate_run_id']}").json()
    # Read back, the same keys (in PostgreSQL's jsonb order, which is its own).
    assert set(stored) == set(answer)
