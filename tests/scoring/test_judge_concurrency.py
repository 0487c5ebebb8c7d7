"""Many judge calls at once, bounded by the project's max_concurrency (real server)."""

import threading

import pytest

from checks.judge import Judge, judge_many
from checks.scorers import Abstain, Result, run_from_payload
from tests.scoring.judge_server import elapsed, judge_server, says


@pytest.fixture
def server():
    with judge_server() as s:
        s.default = says('{"score": 0.9, "reason": "fine"}', delay=0.5)
        yield s


def runs(n):
    return [run_from_payload({"trace_id": f"run-{i}", "input": "q", "output": f"answer {i}"}) for i in range(n)]


def judge(url, limit):
    return Judge(
        endpoint=url, model="m", timeout_seconds=10, criteria={"relevance": "Relevant?"}, max_concurrency=limit,
        allow_private=True,  # the test server is on loopback
    )  # fmt: skip


def test_it_runs_twenty_half_second_calls_four_at_a_time_in_about_two_and_a_half_seconds(server):
    seen = []
    count, seconds = elapsed(
        judge_many,
        config=judge(server.url, 4),
        criterion_ids=["relevance"],
        runs=runs(20),
        on_result=lambda run, criterion_id, outcome: seen.append((run.trace_id, criterion_id, outcome)),
    )
    assert count == 20 == server.count
    assert sorted(t for t, _, _ in seen) == sorted(f"run-{i}" for i in range(20))
    assert all(isinstance(o, Result) and o.value == 0.9 for _, _, o in seen)
    assert server.max_in_flight == 4
    assert 2.4 < seconds < 5, "serially this takes 10 s"


def test_it_never_has_more_calls_in_flight_than_the_limit(server):
    judge_many(config=judge(server.url, 2), criterion_ids=["relevance"], runs=runs(6), on_result=lambda *a: None)
    assert server.max_in_flight == 2


def test_it_hands_each_outcome_over_as_soon_as_its_call_finishes_in_the_calling_thread(server):
    caller = threading.get_ident()
    server.default = says('{"score": 1, "reason": "quick"}')
    slow = says('{"score": 0, "reason": "slow"}', delay=1.5)
    server.choose = lambda record: slow if "answer 0" in record["body"]["messages"][-1]["content"] else None
    order = []

    def on_result(run, criterion_id, outcome):
        assert threading.get_ident() == caller
        order.append(run.trace_id)

    judge_many(config=judge(server.url, 4), criterion_ids=["relevance"], runs=runs(4), on_result=on_result)
    assert order[-1] == "run-0"  # the slow first call came last; the others did not wait for it


def test_it_asks_every_criterion_about_every_run(server):
    server.default = says('{"score": 1, "reason": "ok"}')
    config = Judge(
        endpoint=server.url, model="m", criteria={"a_one": "A?", "b_two": "B?"}, max_concurrency=3, allow_private=True
    )
    seen = set()
    judge_many(
        config=config,
        criterion_ids=["a_one", "b_two"],
        runs=runs(3),
        on_result=lambda r, c, o: seen.add((r.trace_id, c)),
    )
    assert seen == {(f"run-{i}", c) for i in range(3) for c in ("a_one", "b_two")}


def test_it_starts_no_further_call_when_the_caller_stops_taking_outcomes(server):
    server.default = says('{"score": 1, "reason": "ok"}', delay=0.2)

    def on_result(run, criterion_id, outcome):
        raise KeyboardInterrupt("worker shutting down")

    with pytest.raises(KeyboardInterrupt):
        judge_many(config=judge(server.url, 2), criterion_ids=["relevance"], runs=runs(50), on_result=on_result)
    assert server.count <= 4


def test_it_gives_deadline_abstentions_without_calls_once_the_deadline_is_near(server):
    import time

    outcomes = []
    judge_many(
        config=judge(server.url, 4), criterion_ids=["relevance"], runs=runs(5), deadline=time.monotonic() + 2,
        on_result=lambda r, c, o: outcomes.append(o),
    )  # fmt: skip
    assert [o.reason for o in outcomes if isinstance(o, Abstain)] == ["deadline"] * 5
    assert server.count == 0
