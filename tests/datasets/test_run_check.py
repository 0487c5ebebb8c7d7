"""The fast run check and the published schema must agree on every input."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft7Validator

from datasets.run_check import run_conforms
from datasets.run_schema import RUN_SCHEMA, SPAN_SCHEMA
from tests.factories import run_payload

_schema = Draft7Validator(RUN_SCHEMA)

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-5, max_value=10**13),
    st.floats(min_value=-1, max_value=2e8, allow_nan=False),
    st.text(max_size=5),
    st.text(min_size=99, max_size=101),
    st.text(min_size=199, max_size=201),
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=6,
)


def _object(keys, known):
    return st.dictionaries(st.sampled_from(sorted(keys)), known, max_size=len(keys))


span_values = st.one_of(values, st.sampled_from(SPAN_SCHEMA["properties"]["kind"]["enum"] + ["ok", "error", "robot"]))
spans = st.dictionaries(
    st.sampled_from(sorted(SPAN_SCHEMA["properties"]) + ["span_id", "bogus"]), span_values, max_size=8
)
run_values = st.one_of(values, st.sampled_from(["ok", "error", "fine"]), st.lists(spans, max_size=3))
runs = st.dictionaries(
    st.sampled_from(sorted(RUN_SCHEMA["properties"]) + ["trace_id", "ouput"]), run_values, max_size=10
)


@settings(max_examples=3000, deadline=None, suppress_health_check=list(HealthCheck))
@given(runs)
def test_it_agrees_with_the_schema_on_generated_runs(item):
    assert run_conforms(item) == _schema.is_valid(item)


@settings(max_examples=1500, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(spans, max_size=3), st.sampled_from(["ok", "error", "fine"]))
def test_it_agrees_with_the_schema_on_generated_spans_of_a_valid_run(generated_spans, status):
    item = run_payload("r", spans=generated_spans, status=status)
    assert run_conforms(item) == _schema.is_valid(item)


def test_it_accepts_the_documented_example_run():
    assert run_conforms(run_payload("run-42"))


def test_it_refuses_near_misses():
    base = run_payload("run-42")
    for change in (
        {"latency_ms": True},
        {"latency_ms": 1.5},
        {"cost_cents": "0.84"},
        {"trace_id": "x" * 201},
        {"tags": ["ok", 3]},
        {"metadata": []},
        {"spans": [{"span_id": ""}]},
        {"spans": [{"span_id": "s", "usage": []}]},
    ):
        item = {**base, **change}
        assert not run_conforms(item), change
        assert not _schema.is_valid(item), change
