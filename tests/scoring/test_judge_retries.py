"""The judge's client against a real server on loopback: retries on 429 and 5xx within the
judge's timeout, ``Retry-After`` honoured, structured output asked for and dropped for a
server that refuses it (docs/judge.md, "Calls")."""

import email.utils
import time

import pytest

from checks.judge import structured
from checks.judge.retries import retry_wait
from checks.scorers import Abstain, Result
from tests.scoring.judge_server import judge_server, raw, says
from tests.scoring.test_judge_calls import ask

VERDICT = '{"score": 0.9, "reason": "Answers the question."}'
REFUSAL = (
    '{"error": {"message": "Unrecognized request argument supplied: response_format", "type": "invalid_request_error"}}'
)


@pytest.fixture
def server():
    structured.forget_refusals()
    with judge_server() as s:
        yield s
    structured.forget_refusals()


def timed(func, *args, **kwargs):
    started = time.monotonic()
    return func(*args, **kwargs), time.monotonic() - started


# Retries


def test_a_server_error_then_an_answer_gives_the_answer_after_two_calls(server):
    server.script(raw(503, "overloaded"), says(VERDICT))
    outcome = ask(server)
    assert isinstance(outcome, Result)
    assert (outcome.value, outcome.detail["attempts"]) == (0.9, 2)


def test_a_rate_limit_waits_what_retry_after_asks_then_calls_again(server):
    server.script(raw(429, "slow down", headers={"Retry-After": "1"}), says(VERDICT))
    outcome, seconds = timed(ask, server, timeout_seconds=5)
    assert isinstance(outcome, Result)
    assert outcome.detail["attempts"] == 2
    assert 1.0 <= seconds < 2.5


def test_retry_after_in_milliseconds_is_honoured(server):
    server.script(raw(429, "slow down", headers={"retry-after-ms": "300"}), says(VERDICT))
    outcome, seconds = timed(ask, server)
    assert outcome.detail["attempts"] == 2
    assert 0.3 <= seconds < 1.5


def test_a_retry_after_beyond_the_timeout_abstains_at_once_with_what_the_server_asked(server):
    server.script(raw(429, "quota", headers={"Retry-After": "12"}))
    outcome, seconds = timed(ask, server, timeout_seconds=5)
    assert isinstance(outcome, Abstain)
    assert (outcome.reason, outcome.detail["retry_after"], outcome.detail["attempts"]) == ("rate_limited", "12", 1)
    assert server.count == 1
    assert seconds < 1


def test_retries_stay_within_the_timeout(server):
    server.default = raw(502, "bad gateway")
    outcome, seconds = timed(ask, server, timeout_seconds=1)
    assert (outcome.reason, outcome.detail["status"]) == ("http_error", 502)
    assert outcome.detail["attempts"] >= 1
    assert seconds < 1.5


def test_a_client_error_is_not_tried_again(server):
    server.default = raw(404, '{"error": "model judge-model not found"}')
    outcome = ask(server)
    assert (outcome.reason, outcome.detail["attempts"], server.count) == ("http_error", 1, 1)


def test_a_timeout_is_not_tried_again_and_says_the_judges_timeout(server):
    server.script(says(VERDICT, delay=5))
    outcome, seconds = timed(ask, server, timeout_seconds=1)
    assert (outcome.reason, outcome.detail["timeout_seconds"], outcome.detail["attempts"]) == ("timeout", 1, 1)
    assert seconds < 2


def test_the_wait_is_retry_after_as_seconds_or_a_date_else_a_growing_backoff():
    soon = email.utils.formatdate(time.time() + 3, usegmt=True)
    assert retry_wait({"retry-after": "2"}, 1) == 2
    assert 1 < retry_wait({"retry-after": soon}, 1) <= 3
    assert retry_wait({"retry-after": "nan"}, 1) is not None
    first, third = retry_wait({}, 1), retry_wait({}, 3)
    assert 0.3 < first <= 0.5 < third <= 2


# Structured output


def test_it_asks_for_the_verdicts_json_schema(server):
    server.script(says(VERDICT))
    outcome = ask(server)
    body = server.requests[0]["body"]
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"]["required"] == ["score", "reason"]
    assert outcome.detail["structured_output"] is True


def test_a_server_refusing_structured_output_is_asked_again_without_it_and_remembered(server):
    server.script(raw(400, REFUSAL), says(VERDICT), says(VERDICT))
    first = ask(server)
    assert isinstance(first, Result)
    assert (first.detail["structured_output"], first.detail["attempts"]) == (False, 2)
    assert "response_format" in server.requests[0]["body"]
    assert "response_format" not in server.requests[1]["body"]
    second = ask(server)
    assert (second.detail["attempts"], server.count) == (1, 3)
    assert "response_format" not in server.requests[2]["body"]


def test_a_bad_request_about_something_else_is_an_http_error_not_a_fallback(server):
    server.default = raw(400, '{"error": {"message": "messages: too long"}}')
    outcome = ask(server)
    assert (outcome.reason, outcome.detail["status"], server.count) == ("http_error", 400, 1)


def test_a_server_ignoring_structured_output_is_read_as_before(server):
    server.script(says(f"Sure. {VERDICT}"))
    outcome = ask(server)
    assert (outcome.value, outcome.detail["structured_output"]) == (0.9, True)
