"""Structured output: the verdict's JSON schema asked for in ``response_format``.

The judge asks for ``{"score": number, "reason": string}`` through
``response_format: {"type": "json_schema", ...}``, which OpenAI and most compatible
servers (vLLM, llama.cpp, Ollama, LiteLLM) enforce while the model writes. A server that
does not know the field refuses it with a 400 or 422 naming it: the call is made again
without it, and that server and model are called without it for
``REFUSAL_MEMORY_SECONDS``, so a pass does not pay two calls per run. Either way the
reply is read by ``checks.judge.replies``, which also finds a verdict in prose or in a
code fence.
"""

import threading
import time

REFUSAL_MEMORY_SECONDS = 600
VERDICT_SCHEMA = {
    "type": "object",
    "properties": {
        "score": {"type": "number", "description": "between 0 and 1; 1 when the answer fully meets the criterion"},
        "reason": {"type": "string", "description": "one sentence"},
    },
    "required": ["score", "reason"],
    "additionalProperties": False,
}
RESPONSE_FORMAT = {
    "type": "json_schema",
    "json_schema": {"name": "judge_verdict", "strict": True, "schema": VERDICT_SCHEMA},
}
_REFUSAL_WORDS = ("response_format", "json_schema", "structured output")

_lock = threading.Lock()
_refused = {}  # (url, model) -> monotonic instant the refusal was seen


def is_refused(url, model):
    """Whether this server and model refused ``response_format`` lately."""
    with _lock:
        seen = _refused.get((url, model))
        if seen is not None and time.monotonic() - seen > REFUSAL_MEMORY_SECONDS:
            del _refused[(url, model)]
            seen = None
    return seen is not None


def refuses(reply):
    """Whether ``reply`` (an ``HttpReply``) is a server refusing ``response_format``."""
    if getattr(reply, "status", None) not in (400, 422):
        return False
    text = reply.body.decode("utf-8", errors="replace").lower()
    return any(word in text for word in _REFUSAL_WORDS)


def remember_refusal(url, model):
    with _lock:
        _refused[(url, model)] = time.monotonic()


def forget_refusals():
    """Every remembered refusal dropped (a configuration change, or a test)."""
    with _lock:
        _refused.clear()
