"""The judge against a real OpenAI-compatible server on loopback: every reply gives the
documented score or abstention (docs/judge.md, "Abstentions")."""

import dataclasses
import json
import logging
import shutil
import socket
import time

import pytest

from checks.judge import Judge, client, judge_score
from checks.judge.client import MAX_REPLY_BYTES
from checks.scorers import Abstain, Result, run_from_payload
from tests.scoring.judge_server import (
    Behaviour,
    elapsed,
    judge_server,
    raw,
    refused_url,
    says,
    self_signed_certificate,
)

KEY = "sk-test-9f8e7d6c5b4a39281706"
QUESTION = "Does the answer address the question that was asked?"


@pytest.fixture
def server():
    with judge_server() as s:
        yield s


def judge_for(url, *, api_key="", timeout_seconds=5):
    return Judge(
        endpoint=url, model="judge-model", api_key=api_key, timeout_seconds=timeout_seconds,
        criteria={"answer_relevance": QUESTION}, allow_private=True,  # the test server is on loopback
    )  # fmt: skip


def run(output="The Focus room costs 75 EUR for 3 hours.", *, expected=None, run_input="How much is Focus for 3h?"):
    return run_from_payload({"trace_id": "run-1", "input": run_input, "output": output}, expected_output=expected)


def ask(server_or_url, **kwargs):
    url = server_or_url if isinstance(server_or_url, str) else server_or_url.url
    options = {k: kwargs.pop(k) for k in ("api_key", "timeout_seconds") if k in kwargs}
    return judge_score(
        config=judge_for(url, **options), criterion_id="answer_relevance", run=kwargs.pop("run", run()), **kwargs
    )


# Replies the judge reads


def test_it_scores_a_json_answer(server):
    server.script(says('{"score": 0.8, "reason": "It gives the price asked for."}'))
    outcome = ask(server)
    assert outcome == Result(0.8, True, "It gives the price asked for.", {**outcome.detail})
    assert outcome.detail["criterion"] == "answer_relevance"
    assert outcome.detail["question"] == QUESTION
    assert outcome.detail["model"] == "judge-model"
    assert outcome.detail["threshold"] == 0.5


def test_it_fails_a_run_scored_below_the_threshold_and_keeps_the_score(server):
    server.script(says('{"score": 0.2, "reason": "It talks about another room."}'))
    outcome = ask(server)
    assert (outcome.value, outcome.passed, outcome.reason) == (0.2, False, "It talks about another room.")


def test_it_reads_json_in_a_code_fence(server):
    server.script(says('Here is my verdict:\n```json\n{"score": 1, "reason": "Direct answer."}\n```'))
    outcome = ask(server)
    assert isinstance(outcome, Result)
    assert (outcome.value, outcome.reason) == (1.0, "Direct answer.")


def test_it_reads_json_inside_a_sentence(server):
    server.script(says('I would say {"score": 0.6, "reason": "Partly relevant."} overall.'))
    outcome = ask(server)
    assert isinstance(outcome, Result)
    assert (outcome.value, outcome.reason) == (0.6, "Partly relevant.")


# Abstentions


def test_it_abstains_on_prose_and_quotes_the_reply(server):
    server.script(says("The answer looks quite relevant to me, I would rate it highly."))
    outcome = ask(server)
    assert isinstance(outcome, Abstain)
    assert outcome.reason == "prose_reply"
    assert outcome.detail["reply"] == "The answer looks quite relevant to me, I would rate it highly."


def test_it_abstains_on_a_seven_on_a_zero_to_one_scale_instead_of_clipping_it(server):
    server.script(says('{"score": 7, "reason": "Very relevant."}'))
    outcome = ask(server)
    assert isinstance(outcome, Abstain)
    assert outcome.reason == "score_off_scale"
    assert outcome.detail["score"] == 7


def test_it_abstains_on_a_negative_score(server):
    server.script(says('{"score": -0.2, "reason": "Off topic."}'))
    outcome = ask(server)
    assert (outcome.reason, outcome.detail["score"]) == ("score_off_scale", -0.2)


def test_it_abstains_on_a_rate_limit_with_its_status_and_body_not_a_zero(server):
    server.script(raw(429, '{"error": "slow down, 20 requests per minute"}', headers={"Retry-After": "12"}))
    outcome = ask(server)
    assert isinstance(outcome, Abstain)
    assert outcome.reason == "rate_limited"
    assert outcome.detail["status"] == 429
    assert outcome.detail["body"] == '{"error": "slow down, 20 requests per minute"}'
    assert outcome.detail["retry_after"] == "12"


def test_it_abstains_on_a_server_error_with_its_status_and_body(server):
    server.default = raw(500, "model crashed: CUDA out of memory")
    outcome = ask(server, timeout_seconds=2)
    assert (outcome.reason, outcome.detail["status"], outcome.detail["body"]) == (
        "http_error", 500, "model crashed: CUDA out of memory"
    )  # fmt: skip
    assert outcome.detail["attempts"] == server.count > 1


def test_it_abstains_when_the_reply_stalls_past_the_timeout(server):
    server.script(says('{"score": 1, "reason": "late"}', delay=10))
    outcome, seconds = elapsed(ask, server, timeout_seconds=1)
    assert isinstance(outcome, Abstain)
    assert outcome.reason == "timeout"
    assert outcome.detail["timeout_seconds"] == 1
    assert 0.9 < seconds < 2.5


def test_it_cuts_a_reply_trickled_byte_by_byte_at_the_timeout_not_per_byte(server):
    # Each byte arrives well within any socket timeout; only a total deadline ends it.
    server.script(Behaviour(body=json.dumps({"choices": []}).encode() * 20, trickle=0.05))
    outcome, seconds = elapsed(ask, server, timeout_seconds=1)
    assert outcome.reason == "timeout"
    assert seconds < 2.5


def test_it_cuts_a_status_line_and_headers_trickled_byte_by_byte_at_the_timeout(server):
    server.script(Behaviour(body=b'{"choices": []}', trickle_all=0.05))
    outcome, seconds = elapsed(ask, server, timeout_seconds=1)
    assert outcome.reason == "timeout"
    assert seconds < 2.5


def test_it_abstains_on_a_two_mib_reply(server):
    server.script(says("x" * (2 * MAX_REPLY_BYTES)))
    outcome = ask(server)
    assert isinstance(outcome, Abstain)
    assert outcome.reason == "reply_too_large"
    assert outcome.detail["limit_bytes"] == 1024 * 1024


def test_it_stops_reading_an_endless_reply_at_one_mib(server):
    server.script(Behaviour(endless=True))
    outcome, seconds = elapsed(ask, server, timeout_seconds=30)
    assert outcome.reason == "reply_too_large"
    assert seconds < 10  # it stopped reading; it did not wait for the 30 s timeout


def test_it_abstains_when_the_connection_is_refused():
    outcome = ask(refused_url())
    assert isinstance(outcome, Abstain)
    assert outcome.reason == "unreachable"
    assert "ConnectionRefusedError" in outcome.detail["error"]


def test_it_abstains_on_a_body_that_is_not_a_chat_completion(server):
    server.script(raw(200, "<html>gateway</html>"), raw(200, '{"object": "list", "data": []}'))
    assert ask(server).reason == "bad_response"
    assert ask(server).reason == "bad_response"


def test_it_abstains_on_a_run_without_an_answer_without_calling_the_model(server):
    for empty in (None, "", "   ", [], {}):
        outcome = ask(server, run=run(output=empty))
        assert outcome.reason == "no_answer"
    assert server.count == 0


def test_it_makes_no_call_when_the_deadline_leaves_less_than_the_timeout(server):
    outcome = ask(server, timeout_seconds=30, deadline=time.monotonic() + 5)
    assert outcome.reason == "deadline"
    assert outcome.detail["timeout_seconds"] == 30
    assert server.count == 0


def test_it_calls_when_the_deadline_leaves_the_whole_timeout(server):
    # R = T = 30 s and one criterion: the arithmetic promises one run, and it is judged.
    outcome = ask(server, timeout_seconds=30, deadline=time.monotonic() + 30)
    assert isinstance(outcome, Result)
    assert server.count == 1


def test_it_abstains_for_a_criterion_that_is_not_configured(server):
    outcome = judge_score(config=judge_for(server.url), criterion_id="tone", run=run())
    assert outcome.reason == "not_configured"
    assert server.count == 0


# The request


def test_it_posts_chat_completions_at_temperature_zero_with_the_model(server):
    ask(server)
    (request,) = server.requests
    assert request["path"] == "/v1/chat/completions"
    assert request["body"]["model"] == "judge-model"
    assert request["body"]["temperature"] == 0
    assert request["headers"]["Content-Type"] == "application/json"


def test_it_sends_the_question_input_answer_and_expected_answer_in_the_prompt(server):
    ask(server, run=run(output="75 EUR", run_input="Price of Focus, 3h?", expected="7500 cents"))
    prompt = json.dumps(server.requests[0]["body"]["messages"])
    for text in (QUESTION, "Price of Focus, 3h?", "75 EUR", "7500 cents", "expected_answer"):
        assert text in prompt


def test_it_leaves_the_expected_answer_out_when_the_case_has_none(server):
    ask(server, run=run(output="75 EUR"))
    user = server.requests[0]["body"]["messages"][-1]["content"]
    assert "expected" not in user.lower()


def test_it_sends_no_authorization_header_when_the_key_is_empty(server):
    ask(server, api_key="")
    assert "Authorization" not in server.requests[0]["headers"]


def test_it_sends_the_key_as_a_bearer_token_when_set(server):
    ask(server, api_key=KEY)
    assert server.requests[0]["headers"]["Authorization"] == f"Bearer {KEY}"


def test_it_never_puts_the_key_in_an_abstention_or_a_log_line_even_when_the_server_echoes_it(server, caplog):
    caplog.set_level(logging.DEBUG)
    server.script(Behaviour(status=401, echo_authorization=True), Behaviour(status=200, echo_authorization=True))
    for _ in range(2):
        outcome = ask(server, api_key=KEY)
        assert isinstance(outcome, Abstain)
        assert KEY not in json.dumps(outcome.detail)
        assert "[redacted]" in json.dumps(outcome.detail)
    assert caplog.records, "abstentions are logged"
    assert KEY not in caplog.text


def test_it_never_puts_the_key_in_a_quoted_prose_reply(server):
    server.script(says(f"Your key {KEY} looks fine to me."))
    outcome = ask(server, api_key=KEY)
    assert outcome.reason == "prose_reply"
    assert KEY not in outcome.detail["reply"]


# HTTPS


@pytest.fixture
def certificate(tmp_path):
    # Fail rather than skip: a missing tool must not silently drop the HTTPS tests.
    assert shutil.which("openssl"), "the HTTPS tests need the openssl command line (apt-get install openssl)"
    return self_signed_certificate(tmp_path)


def test_it_refuses_a_server_whose_certificate_it_cannot_verify(certificate):
    with judge_server(tls=certificate) as server:
        outcome = ask(server, api_key=KEY)
    assert outcome.reason == "unreachable"
    assert "CERTIFICATE_VERIFY_FAILED" in outcome.detail["error"]


def test_it_judges_over_https_with_a_certificate_the_system_trusts(certificate, monkeypatch):
    monkeypatch.setenv("SSL_CERT_FILE", str(certificate[0]))  # OpenSSL's own way to add a trusted CA
    with judge_server(tls=certificate) as server:
        server.script(says('{"score": 0.7, "reason": "Over TLS."}'))
        outcome = ask(server, api_key=KEY)
        assert server.requests[0]["headers"]["Authorization"] == f"Bearer {KEY}"
        assert server.requests[0]["headers"]["Host"] == server.url.split("/")[2]
    assert (outcome.value, outcome.reason) == (0.7, "Over TLS.")


def test_it_does_not_call_a_loopback_judge_unless_private_addresses_are_allowed(server):
    judge = dataclasses.replace(judge_for(server.url), allow_private=False)
    outcome = judge_score(config=judge, criterion_id="answer_relevance", run=run())
    assert outcome.reason == "address_refused"
    assert "127.0.0.1 is a loopback address" in outcome.detail["message"]
    assert server.count == 0


def test_the_address_a_call_connected_to_is_checked_again_before_anything_is_sent(server):
    # A host name may resolve elsewhere between the check and the connection: the
    # connected socket's own peer address is what the rule is applied to last.
    host, port = server.url.split("//")[1].split("/")[0].split(":")
    with socket.create_connection((host, int(port))) as sock:
        with pytest.raises(client._Refused, match="127.0.0.1 is a loopback address"):
            client._Call(time.monotonic() + 5, allow_private=False).check_peer(sock)
        client._Call(time.monotonic() + 5, allow_private=True).check_peer(sock)  # allowed: nothing raised
    assert server.count == 0
