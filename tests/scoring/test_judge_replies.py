"""Reading the judge's reply: what counts as a score, and every way it does not (pure)."""

import json

import pytest

from checks.judge.replies import QUOTE_CHARS, Verdict, completion_content, verdict_from_reply
from checks.scorers import Abstain


@pytest.mark.parametrize(
    ("reply", "score", "reason"),
    [
        ('{"score": 0.75, "reason": "Mostly on topic."}', 0.75, "Mostly on topic."),
        ('  {"reason": "Exact.", "score": 1}\n', 1.0, "Exact."),
        ('{"score": 0, "reason": "Off topic."}', 0.0, "Off topic."),
        ('```json\n{"score": 0.5, "reason": "Half."}\n```', 0.5, "Half."),
        ('Verdict below.\n```\n{"score": 0.9, "reason": "Good."}\n```\nThanks.', 0.9, "Good."),
        ('My assessment is {"score": 0.3, "reason": "Vague."} as requested.', 0.3, "Vague."),
        ('Ignore {this} and {"score": 0.4, "reason": "x"}', 0.4, "x"),
        ('{"result": {"score": 0.6, "reason": "nested"}}', 0.6, "nested"),
    ],
)
def test_it_reads_a_score_in_json_a_code_fence_or_a_sentence(reply, score, reason):
    assert verdict_from_reply(reply) == Verdict(score, reason)


def test_it_accepts_a_missing_reason_and_says_so():
    assert verdict_from_reply('{"score": 1}') == Verdict(1.0, "the judge gave no reason")


@pytest.mark.parametrize(
    "reply",
    [
        "This answer is relevant. Score: 0.9",
        "I'd give it a 9/10.",
        '{"rating": 0.9, "reason": "no score key"}',
        "{not json at all}",
    ],
)
def test_it_abstains_on_prose_quoting_the_reply(reply):
    outcome = verdict_from_reply(reply)
    assert outcome == Abstain(
        "prose_reply",
        {
            "message": "the judge answered in prose, without a JSON object holding a score",
            "reply": reply,
            "reply_chars": len(reply),
        },
    )


def test_it_quotes_only_the_start_of_a_long_prose_reply():
    outcome = verdict_from_reply("word " * 1000)
    assert outcome.reason == "prose_reply"
    assert len(outcome.detail["reply"]) == QUOTE_CHARS + 1
    assert outcome.detail["reply"].endswith("…")
    assert outcome.detail["reply_chars"] == 5000


@pytest.mark.parametrize(
    ("reply", "score"),
    [
        ('{"score": 7, "reason": "great"}', 7),
        ('{"score": -0.2, "reason": "bad"}', -0.2),
        ('{"score": 1.0001}', 1.0001),
        ('{"score": "0.8"}', "0.8"),
        ('{"score": true}', True),
        ('{"score": null}', None),
        ('{"score": NaN}', "nan"),
    ],
)
def test_it_abstains_on_a_score_off_the_scale_and_never_clips_it(reply, score):
    outcome = verdict_from_reply(reply)
    assert isinstance(outcome, Abstain)
    assert outcome.reason == "score_off_scale"
    assert outcome.detail["score"] == score
    assert outcome.detail["reply"] == reply
    json.dumps(outcome.detail)  # storable as JSON


def test_it_survives_a_reply_full_of_braces_quickly():
    assert verdict_from_reply("{" * 200_000).reason == "prose_reply"
    assert verdict_from_reply('{"a":' * 50_000).reason == "prose_reply"


def test_it_takes_the_text_of_the_first_choice_of_a_chat_completion():
    body = json.dumps({"choices": [{"message": {"role": "assistant", "content": '{"score": 1}'}}]}).encode()
    assert completion_content(body) == '{"score": 1}'


def test_it_joins_content_parts():
    body = {
        "choices": [{"message": {"content": [{"type": "text", "text": '{"score":'}, {"type": "text", "text": " 1}"}]}}]
    }
    assert completion_content(json.dumps(body)) == '{"score": 1}'


@pytest.mark.parametrize(
    "body",
    [
        b"<html>502 Bad Gateway</html>",
        b'{"choices": []}',
        b'{"data": 1}',
        b"[1, 2]",
        b'{"choices": [{"message": {"content": null}}]}',
    ],
)
def test_it_abstains_on_a_body_that_is_not_a_chat_completion_with_text(body):
    outcome = completion_content(body)
    assert isinstance(outcome, Abstain)
    assert outcome.reason == "bad_response"
    assert outcome.detail["body"] == body.decode()
