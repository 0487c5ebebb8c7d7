"""The Tracer: agent runs recorded as the POST /v1/api/traces payload (ARCHITECTURE section 9)."""

import json
import re
import time

import jsonschema
import pytest

import evalgate
from datasets.run_schema import RUN_SCHEMA

RFC3339_Z = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{3})?Z$")


class Unavailable(Exception):
    pass


def scripted_run(tracer, trace_id="run-42"):
    """The reservo quote, with every figure given, as a scripted agent records it."""
    with tracer.run(
        trace_id,
        name="reservo",
        input="¿Cuánto cuesta Focus pro 3h?",
        case="quote_focus_pro_3h",
        started_at="2026-11-30T10:00:00Z",
        latency_ms=1200,
    ) as run:
        with run.span(
            "llm", "plan", model="m-1", usage={"input_tokens": 10}, started_at="2026-11-30T10:00:00Z", latency_ms=300
        ):
            pass
        with run.span(
            "tool", "quote_room", input={"room": "Focus"}, started_at="2026-11-30T10:00:00.300Z", latency_ms=50
        ) as span:
            span.output = {"total_cents": 7500}
            span.cost_cents = 0
        run.output = "Focus pro 3h cuesta 75,00 €."
        run.cost_cents = 0.84
    return tracer.runs[-1]


def test_it_records_the_run_payload_of_the_contract():
    payload = scripted_run(evalgate.Tracer(experiment="v2", dataset="reservo"))

    jsonschema.validate(payload, RUN_SCHEMA)
    assert payload == {
        "trace_id": "run-42",
        "name": "reservo",
        "experiment": "v2",
        "dataset": "reservo",
        "case": "quote_focus_pro_3h",
        "input": "¿Cuánto cuesta Focus pro 3h?",
        "output": "Focus pro 3h cuesta 75,00 €.",
        "status": "ok",
        "error": None,
        "started_at": "2026-11-30T10:00:00Z",
        "ended_at": "2026-11-30T10:00:01.200Z",
        "latency_ms": 1200,
        "cost_cents": 0.84,
        "metadata": {},
        "tags": [],
        "spans": [
            {
                "span_id": "s1",
                "parent_id": None,
                "kind": "llm",
                "name": "plan",
                "input": None,
                "output": None,
                "status": "ok",
                "error": None,
                "started_at": "2026-11-30T10:00:00Z",
                "ended_at": "2026-11-30T10:00:00.300Z",
                "latency_ms": 300,
                "model": "m-1",
                "usage": {"input_tokens": 10},
                "attributes": {},
            },
            {
                "span_id": "s2",
                "parent_id": None,
                "kind": "tool",
                "name": "quote_room",
                "input": {"room": "Focus"},
                "output": {"total_cents": 7500},
                "status": "ok",
                "error": None,
                "started_at": "2026-11-30T10:00:00.300Z",
                "ended_at": "2026-11-30T10:00:00.350Z",
                "latency_ms": 50,
                "cost_cents": 0,
                "attributes": {},
            },
        ],
    }


def test_it_gives_a_scripted_run_the_same_payload_every_time():
    # Same payload, same trace_id: uploading it again is a no-op on the server, not a 409.
    first = scripted_run(evalgate.Tracer(experiment="v2"))
    second = scripted_run(evalgate.Tracer(experiment="v2"))

    assert first == second


def test_it_gives_nested_spans_their_parent():
    tracer = evalgate.Tracer(experiment="v2")
    with tracer.run("r") as run:
        with run.span("agent", "loop") as loop:
            with run.span("llm", "think"):
                pass
            with loop.span("tool", "quote_room") as tool, run.span("retrieval", "prices"):
                pass
        with run.span("other", "after"):
            pass

    spans = {s["name"]: s for s in tracer.runs[0]["spans"]}
    assert [s["name"] for s in tracer.runs[0]["spans"]] == ["loop", "think", "quote_room", "prices", "after"]
    assert spans["loop"]["parent_id"] is None
    assert spans["think"]["parent_id"] == loop.span_id
    assert spans["quote_room"]["parent_id"] == loop.span_id
    assert spans["prices"]["parent_id"] == tool.span_id
    assert spans["after"]["parent_id"] is None
    assert len({s["span_id"] for s in spans.values()}) == 5


def test_it_marks_a_span_that_raised_as_an_error_and_re_raises():
    tracer = evalgate.Tracer(experiment="v2")
    with tracer.run("r") as run:
        with pytest.raises(Unavailable), run.span("tool", "book_room", input={"room": "Focus"}):
            raise Unavailable("room service down")
        run.output = "Sorry, booking is down."

    payload = tracer.runs[0]
    assert payload["spans"][0]["status"] == "error"
    assert payload["spans"][0]["error"] == "Unavailable: room service down"
    # The agent handled it: the run itself ended well.
    assert (payload["status"], payload["error"]) == ("ok", None)
    jsonschema.validate(payload, RUN_SCHEMA)


def test_it_records_a_run_that_raised_and_re_raises():
    tracer = evalgate.Tracer(experiment="v2")

    with pytest.raises(KeyError), tracer.run("r", input="q") as run, run.span("tool", "quote_room"):
        raise KeyError("room")

    payload = tracer.runs[0]
    assert (payload["status"], payload["error"]) == ("error", "KeyError: 'room'")
    assert payload["spans"][0]["status"] == "error"
    assert payload["output"] is None


def test_it_measures_times_unless_they_are_given():
    tracer = evalgate.Tracer()
    with tracer.run("r") as run:
        with run.span("tool", "slow"):
            time.sleep(0.03)
        with run.span("tool", "scripted", latency_ms=5):
            time.sleep(0.03)

    payload = tracer.runs[0]
    slow, scripted = payload["spans"]
    assert 25 <= slow["latency_ms"] < 1000
    assert scripted["latency_ms"] == 5
    assert payload["latency_ms"] >= 55
    for record in (payload, slow, scripted):
        assert RFC3339_Z.match(record["started_at"]) and RFC3339_Z.match(record["ended_at"])
        assert record["started_at"] <= record["ended_at"]
    assert "cost_cents" not in payload and "cost_cents" not in slow


def test_it_lets_values_set_inside_the_block_win():
    tracer = evalgate.Tracer()
    with tracer.run("r") as run:
        with run.span("tool", "t") as span:
            span.started_at = "2026-11-30T10:00:00+01:00"
            span.latency_ms = 49.6
        run.latency_ms = 2000
        run.status = "error"
        run.error = "the agent gave up"

    payload = tracer.runs[0]
    assert payload["spans"][0]["started_at"] == "2026-11-30T09:00:00Z"
    assert payload["spans"][0]["latency_ms"] == 50  # the contract's latency_ms is an integer
    assert payload["latency_ms"] == 2000
    assert (payload["status"], payload["error"]) == ("error", "the agent gave up")


def test_it_rejects_an_unknown_span_kind_when_the_span_is_written():
    tracer = evalgate.Tracer()
    with tracer.run("r") as run, pytest.raises(ValueError, match="span kind must be one of"):
        run.span("function", "quote_room")


def test_it_writes_runs_as_jsonl(tmp_path):
    tracer = evalgate.Tracer(experiment="v2", dataset="reservo")
    scripted_run(tracer, "run-1")
    scripted_run(tracer, "run-2")
    path = tmp_path / "runs.jsonl"

    tracer.write_jsonl(str(path))

    lines = path.read_text("utf-8").splitlines()
    assert [json.loads(line) for line in lines] == tracer.runs
    assert "Cuánto" in lines[0]  # UTF-8, not \u escapes


def test_it_records_a_replayed_step_with_add_span():
    tracer = evalgate.Tracer()
    with tracer.run("r") as run:
        run.add_span("tool", "quote_room", input={"room": "Focus"}, output={"total_cents": 7500}, latency_ms=40)
        run.add_span("tool", "book_room", error="409 from the booking API", latency_ms=10)

    quote, book = tracer.runs[0]["spans"]
    assert (quote["output"], quote["status"], quote["latency_ms"]) == ({"total_cents": 7500}, "ok", 40)
    assert (book["status"], book["error"]) == ("error", "409 from the booking API")
