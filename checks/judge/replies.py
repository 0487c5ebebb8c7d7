"""Reading the judge's reply: a score and a reason, or why there is none.

Pure. Two steps:

1. ``completion_content(body)``: the text of the first choice of an OpenAI chat
   completion (``choices[0].message.content``; a list of content parts is joined).
   A body that is not JSON, or has no choice with text, abstains ``bad_response``.
2. ``verdict_from_reply(text)``: the first JSON object with a ``"score"`` key, looked
   for in this order: the whole reply; a fenced code block (```` ```json ... ``` ````);
   an object embedded in a sentence ("Here is my verdict: {...}. Hope it helps").
   - No such object: abstain ``prose_reply``, quoting the reply (first
     ``QUOTE_CHARS`` characters).
   - A score that is not a number, or is outside 0..1 (7 on a 0..1 scale, -0.2, NaN):
     abstain ``score_off_scale``. Never clipped: a 7 is not a 0.9, and clipping it
     would invent a number.
   - ``reason`` is the model's, cut at ``REASON_MAX_CHARS``; a missing reason is
     allowed and reads "the judge gave no reason".
"""

import json
import math
import re
from dataclasses import dataclass

from checks.scorers.base import Abstain

QUOTE_CHARS = 500
REASON_MAX_CHARS = 1000
# A verdict is a few hundred bytes; looking for one from more opening braces than this
# means the reply is not one, and trying every brace of a large reply is quadratic.
MAX_EMBEDDED_ATTEMPTS = 200
_FENCE_RE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\r?\n?(.*?)```", re.DOTALL)
_DECODER = json.JSONDecoder()


@dataclass(frozen=True)
class Verdict:
    score: float
    reason: str


def quote(text, limit=QUOTE_CHARS):
    """The start of ``text`` for a detail, ending in ``…`` when cut."""
    return text if len(text) <= limit else text[:limit] + "…"


def completion_content(body):
    """The reply text of a chat completion body (bytes or str), or ``Abstain("bad_response")``."""
    text = body.decode("utf-8", errors="replace") if isinstance(body, bytes | bytearray) else str(body)
    try:
        data = json.loads(text)
    except ValueError:
        return _bad_response("the judge's reply is not JSON", text)
    choices = data.get("choices") if isinstance(data, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return _bad_response("the judge's reply has no choices", text)
    message = choices[0].get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list):
        content = "".join(
            part.get("text", "") for part in content if isinstance(part, dict) and isinstance(part.get("text"), str)
        )
    if not isinstance(content, str) or not content.strip():
        return _bad_response("the judge's reply has no text in choices[0].message.content", text)
    return content


def _bad_response(message, text):
    return Abstain("bad_response", {"message": message, "body": quote(text)})


def verdict_from_reply(text):
    """A ``Verdict`` from the model's reply text, or an ``Abstain`` (``prose_reply``, ``score_off_scale``)."""
    found = _verdict_object(text)
    if found is None:
        return Abstain(
            "prose_reply",
            {
                "message": "the judge answered in prose, without a JSON object holding a score",
                "reply": quote(text),
                "reply_chars": len(text),
            },
        )
    score = found["score"]
    if isinstance(score, bool) or not isinstance(score, int | float):
        return _off_scale(f"the judge's score {score!r} is not a number", score, text)
    if not math.isfinite(score) or not 0 <= score <= 1:
        return _off_scale(f"the judge's score {score!r} is outside the 0..1 scale", score, text)
    reason = found.get("reason")
    reason = reason.strip() if isinstance(reason, str) else ""
    reason = reason[:REASON_MAX_CHARS] or "the judge gave no reason"
    return Verdict(float(score), reason)


def _off_scale(message, score, text):
    if isinstance(score, float) and not math.isfinite(score):
        score = str(score)  # NaN and Infinity are not JSON
    elif not isinstance(score, str | int | float | bool | type(None)):
        score = quote(json.dumps(score, default=str))
    return Abstain("score_off_scale", {"message": message, "score": score, "reply": quote(text)})


def _verdict_object(text):
    whole = _parse_object(text.strip())
    if whole is not None:
        return whole
    for match in _FENCE_RE.finditer(text):
        fenced = _parse_object(match.group(1).strip())
        if fenced is not None:
            return fenced
    start = text.find("{")
    attempts = 0
    while start != -1 and attempts < MAX_EMBEDDED_ATTEMPTS:
        attempts += 1
        try:
            value, _ = _DECODER.raw_decode(text, start)
        except (ValueError, RecursionError):
            value = None
        if isinstance(value, dict) and "score" in value:
            return value
        start = text.find("{", start + 1)
    return None


def _parse_object(text):
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) and "score" in value else None
