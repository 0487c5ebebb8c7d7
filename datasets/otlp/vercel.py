"""The Vercel AI SDK's own span attributes (``experimental_telemetry``), where no GenAI one says the same.

- kind from ``ai.operationId``: ``ai.generateText.doGenerate``, ``ai.streamText.doStream``,
  ``ai.generateObject.doGenerate``, ``ai.streamObject.doStream`` → llm (one model call);
  ``ai.toolCall`` → tool; ``ai.generateText``, ``ai.streamText``, ``ai.generateObject``,
  ``ai.streamObject`` → agent (the loop over calls and tools);
- a model call's input is ``ai.prompt.messages``; an agent's is ``ai.prompt``
  (``{"system", "prompt", "messages"}``); the output of both is ``ai.response.text``
  with ``ai.response.toolCalls`` (or ``ai.response.object``);
- a tool's input and output are ``ai.toolCall.args`` / ``ai.toolCall.input`` and
  ``ai.toolCall.result`` / ``ai.toolCall.output``.

Pure: no Django.
"""

from datasets.otlp.messages import json_lenient, messages_normalise

OPERATION_ID = "ai.operationId"
_KINDS = {
    "ai.generateText.doGenerate": "llm",
    "ai.streamText.doStream": "llm",
    "ai.generateObject.doGenerate": "llm",
    "ai.streamObject.doStream": "llm",
    "ai.embed.doEmbed": "llm",
    "ai.embedMany.doEmbed": "llm",
    "ai.toolCall": "tool",
    "ai.generateText": "agent",
    "ai.streamText": "agent",
    "ai.generateObject": "agent",
    "ai.streamObject": "agent",
}
TOOL_NAME = "ai.toolCall.name"


def vercel_kind(attrs):
    """evalsite's kind for a span of the AI SDK, or ``None`` for any other span."""
    operation = attrs.get(OPERATION_ID)
    return _KINDS.get(operation.strip()) if isinstance(operation, str) else None


def vercel_io(kind, attrs, used):
    """``(input, output)`` from the AI SDK's attributes (``None`` where they say nothing)."""
    if kind == "tool":
        return _take(attrs, ("ai.toolCall.args", "ai.toolCall.input"), used), _take(
            attrs, ("ai.toolCall.result", "ai.toolCall.output"), used
        )
    if kind == "llm":
        value_in = messages_normalise(_take(attrs, ("ai.prompt.messages",), used))
    else:
        value_in = _prompt(_take(attrs, ("ai.prompt",), used))
    return value_in, _response(attrs, used)


def _take(attrs, keys, used):
    for key in keys:
        if attrs.get(key) is not None:
            used.add(key)
            return json_lenient(attrs[key])
    return None


def _prompt(prompt):
    if not isinstance(prompt, dict):
        return messages_normalise(prompt) if prompt is not None else None
    messages = []
    if isinstance(prompt.get("system"), str) and prompt["system"]:
        messages.append({"role": "system", "content": prompt["system"]})
    if prompt.get("messages"):
        messages += prompt["messages"] if isinstance(prompt["messages"], list) else []
    if isinstance(prompt.get("prompt"), str):
        messages.append({"role": "user", "content": prompt["prompt"]})
    return messages_normalise(messages)


def _response(attrs, used):
    text = _take(attrs, ("ai.response.text",), used)
    calls = _take(attrs, ("ai.response.toolCalls",), used)
    obj = _take(attrs, ("ai.response.object",), used)
    if text is None and calls is None and obj is None:
        return None
    message = {"role": "assistant", "content": text if isinstance(text, str) else None}
    if isinstance(calls, list):
        message["tool_calls"] = [
            {
                "id": c.get("toolCallId"),
                "function": {"name": c.get("toolName"), "arguments": c.get("args", c.get("input"))},
            }
            for c in calls
            if isinstance(c, dict)
        ]
    if obj is not None and text is None:
        message["content"] = obj if isinstance(obj, str) else [{"type": "object", "value": obj}]
    finish = attrs.get("ai.response.finishReason")
    if isinstance(finish, str):
        message["finish_reason"] = finish
    return messages_normalise([message], default_role="assistant")
