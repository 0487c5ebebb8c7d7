"""Chat messages in the shapes instrumentations send them, brought into one shape.

The one shape is the GenAI semantic conventions' own (``gen_ai.input.messages``)::

    [{"role": "user", "parts": [{"type": "text", "content": "How much is Focus pro?"}]},
     {"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "quote_room",
                                      "arguments": {"room": "Focus"}}], "finish_reason": "tool_call"}]

Read from, in this order of preference:

1. ``gen_ai.input.messages`` / ``gen_ai.output.messages`` span attributes (a JSON string
   or a structured value), or the same attributes on a
   ``gen_ai.client.inference.operation.details`` event;
2. the older per-message events ``gen_ai.system.message``, ``gen_ai.user.message``,
   ``gen_ai.assistant.message``, ``gen_ai.tool.message`` (input) and ``gen_ai.choice``
   (output), with ``content`` / ``tool_calls`` / ``message`` attributes or a
   ``gen_ai.event.content`` JSON attribute;
3. the older ``gen_ai.prompt`` / ``gen_ai.completion`` values, as span attributes or on
   ``gen_ai.content.prompt`` / ``gen_ai.content.completion`` events;
4. flattened attributes: ``gen_ai.prompt.0.role`` / ``.content`` (and
   ``gen_ai.completion.N...``), and OpenInference's ``llm.input_messages.0.message.role``
   / ``.message.content`` / ``.message.contents.N.message_content.text`` /
   ``.message.tool_calls.N.tool_call.function.name`` / ``.arguments``.

OpenAI-style messages (``{"role", "content", "tool_calls"}``) are converted to parts.
Pure Python: no Django, no database.
"""

from checks.json_rules import JsonRefused, json_parse

INPUT_EVENTS = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}
CHOICE_EVENT = "gen_ai.choice"
DETAILS_EVENT = "gen_ai.client.inference.operation.details"
PROMPT_EVENT = "gen_ai.content.prompt"
COMPLETION_EVENT = "gen_ai.content.completion"


def json_lenient(value, *, containers_only=True):
    """``value`` parsed when it is a string holding JSON; otherwise ``value`` unchanged.

    With ``containers_only`` only objects and arrays are parsed, so a tool result
    ``"42"`` stays the text it was.
    """
    if not isinstance(value, str):
        return value
    text = value.strip()
    if containers_only and not (text.startswith("{") or text.startswith("[")):
        return value
    try:
        # The same rules as a request body (range, depth, NUL): what cannot be stored stays text.
        return json_parse(text, nul=False)
    except JsonRefused:
        return value


def messages_normalise(value, *, default_role=None):
    """A list of messages in the one shape, or ``None`` when ``value`` holds none."""
    value = json_lenient(value)
    if isinstance(value, dict):
        value = [value]
    if isinstance(value, str):
        return [_text_message(default_role or "user", value)] if value else None
    if not isinstance(value, list):
        return None
    messages = [m for m in (message_normalise(item, default_role=default_role) for item in value) if m]
    return messages or None


def message_normalise(item, *, default_role=None):
    """One message in the one shape (``None`` for something that is not a message)."""
    item = json_lenient(item)
    if isinstance(item, str):
        return _text_message(default_role or "user", item)
    if not isinstance(item, dict) or not item.keys() & {"role", "parts", "content", "tool_calls", "message"}:
        return None
    # gen_ai.choice carries {"message": {...}, "finish_reason": ...}.
    if isinstance(item.get("message"), dict | str) and "role" not in item and "parts" not in item:
        inner = message_normalise(item["message"], default_role=default_role or "assistant")
        if inner is not None and item.get("finish_reason") is not None:
            inner["finish_reason"] = item["finish_reason"]
        return inner
    role = item.get("role") or default_role or "user"
    message = {"role": role}
    if isinstance(item.get("parts"), list):
        message["parts"] = item["parts"]
    else:
        parts = _content_parts(item.get("content"))
        parts += _tool_call_parts(item.get("tool_calls"))
        if role == "tool" and item.get("tool_call_id") is not None:
            response = _joined_text(parts)
            parts = [{"type": "tool_call_response", "id": item["tool_call_id"], "response": json_lenient(response)}]
        message["parts"] = parts
    for key in ("name", "finish_reason"):
        if item.get(key) is not None:
            message[key] = item[key]
    return message


def _text_message(role, text):
    return {"role": role, "parts": [{"type": "text", "content": text}]}


def _content_parts(content):
    if content is None:
        return []
    if isinstance(content, str):
        return [{"type": "text", "content": content}] if content else []
    if isinstance(content, list):
        parts = []
        for item in content:
            if isinstance(item, str):
                parts.append({"type": "text", "content": item})
            elif isinstance(item, dict) and isinstance(item.get("text"), str):
                parts.append({"type": "text", "content": item["text"]})
            elif isinstance(item, dict) and item.get("type") == "text" and isinstance(item.get("content"), str):
                parts.append(item)
            else:
                parts.append(item)
        return parts
    return [{"type": "text", "content": content}] if not isinstance(content, dict) else [content]


def _tool_call_parts(tool_calls):
    tool_calls = json_lenient(tool_calls)
    if not isinstance(tool_calls, list):
        return []
    parts = []
    for call in tool_calls:
        if not isinstance(call, dict):
            continue
        function = call.get("function") if isinstance(call.get("function"), dict) else call
        part = {"type": "tool_call", "name": function.get("name")}
        if call.get("id") is not None:
            part["id"] = call["id"]
        if function.get("arguments") is not None:
            part["arguments"] = json_lenient(function["arguments"])
        parts.append(part)
    return parts


def _joined_text(parts):
    texts = [p["content"] for p in parts if p.get("type") == "text" and isinstance(p.get("content"), str)]
    return "\n".join(texts) if texts else None


def message_text(message):
    """The text parts of one message joined by newlines, or ``None`` without text."""
    parts = message.get("parts") if isinstance(message, dict) else None
    if not isinstance(parts, list):
        return None
    return _joined_text([p for p in parts if isinstance(p, dict)])


def last_text(messages, role):
    """Text of the last message of ``role`` that has text, or ``None``."""
    if not is_message_list(messages):
        return None
    for message in reversed(messages):
        if message.get("role") == role:
            text = message_text(message)
            if text is not None:
                return text
    return None


def is_message_list(value):
    """Whether ``value`` looks like a list of messages in the one shape."""
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(m, dict) and "role" in m and isinstance(m.get("parts"), list) for m in value)
    )


def messages_from_events(events, consumed):
    """``(input, output)`` messages carried by span events; adds used event indexes to ``consumed``."""
    inputs, outputs = [], []
    for index, event in enumerate(events):
        attrs = event.attributes
        if event.name == DETAILS_EVENT:
            found_in = messages_normalise(attrs.get("gen_ai.input.messages"))
            system = system_instructions(attrs.get("gen_ai.system_instructions"))
            if system and found_in:
                found_in = [system, *found_in]
            found_out = messages_normalise(attrs.get("gen_ai.output.messages"), default_role="assistant")
            if found_in or found_out:
                inputs += found_in or []
                outputs += found_out or []
                consumed.add(index)
        elif event.name in INPUT_EVENTS:
            message = _event_message(attrs, INPUT_EVENTS[event.name])
            if message:
                inputs.append(message)
            consumed.add(index)
        elif event.name == CHOICE_EVENT:
            message = _event_message(attrs, "assistant")
            if message:
                outputs.append(message)
            consumed.add(index)
        elif event.name == PROMPT_EVENT:
            inputs += messages_normalise(attrs.get("gen_ai.prompt")) or []
            consumed.add(index)
        elif event.name == COMPLETION_EVENT:
            outputs += messages_normalise(attrs.get("gen_ai.completion"), default_role="assistant") or []
            consumed.add(index)
    return inputs or None, outputs or None


def _event_message(attrs, role):
    body = json_lenient(attrs.get("gen_ai.event.content"))
    fields = body if isinstance(body, dict) else attrs
    fields = {
        k: v for k, v in fields.items() if k in ("role", "content", "tool_calls", "message", "finish_reason", "id")
    }
    # A tool message event names the call it answers by ``id``.
    call_id = fields.pop("id", None)
    if not fields:
        return None
    if role == "tool" and call_id is not None:
        fields["tool_call_id"] = call_id
    return message_normalise(fields, default_role=role)


def system_instructions(value):
    """``gen_ai.system_instructions`` (a list of parts, or text) as one system message, or ``None``."""
    value = json_lenient(value)
    if isinstance(value, str):
        return _text_message("system", value) if value.strip() else None
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list) or not value:
        return None
    parts = [p if isinstance(p, dict) else {"type": "text", "content": str(p)} for p in value]
    return {"role": "system", "parts": parts}


def first_text(messages, role):
    """Text of the first message of ``role`` that has text, or ``None``."""
    if not is_message_list(messages):
        return None
    for message in messages:
        if message.get("role") == role:
            text = message_text(message)
            if text is not None:
                return text
    return None


def messages_from_flat(attrs, prefix, consumed, *, openinference):
    """Messages flattened into indexed attributes (``prefix.0.role`` ...); ``None`` if none."""
    rows = indexed(attrs, prefix, consumed)
    if not rows:
        return None
    messages = []
    for _, fields in sorted(rows.items()):
        if openinference:
            fields = {k.removeprefix("message."): v for k, v in fields.items()}
        item = {"role": fields.get("role") or ("assistant" if "completion" in prefix or "output" in prefix else "user")}
        content_rows = _nested(fields, "contents")
        if fields.get("content") is not None:
            item["content"] = fields["content"]
        elif content_rows:
            item["content"] = [
                {"type": "text", "text": row.get("message_content.text")}
                if row.get("message_content.text") is not None
                else row
                for _, row in sorted(content_rows.items())
            ]
        calls = _nested(fields, "tool_calls")
        if calls:
            item["tool_calls"] = [
                {
                    "id": row.get("tool_call.id") or row.get("id"),
                    "function": {
                        "name": row.get("tool_call.function.name") or row.get("name"),
                        "arguments": row.get("tool_call.function.arguments") or row.get("arguments"),
                    },
                }
                for _, row in sorted(calls.items())
            ]
        for key in ("finish_reason", "name", "tool_call_id"):
            if fields.get(key) is not None:
                item[key] = fields[key]
        message = message_normalise(item)
        if message:
            messages.append(message)
    return messages or None


def indexed(attrs, prefix, consumed):
    """``{index: {rest_of_key: value}}`` for attributes named ``prefix.<index>.<rest>``."""
    rows = {}
    start = prefix + "."
    for key, value in attrs.items():
        if not key.startswith(start):
            continue
        head, _, rest = key[len(start) :].partition(".")
        if not head.isdigit() or not rest:
            continue
        rows.setdefault(int(head), {})[rest] = value
        consumed.add(key)
    return rows


def _nested(fields, name):
    rows = {}
    start = name + "."
    for key, value in fields.items():
        if key.startswith(start):
            head, _, rest = key[len(start) :].partition(".")
            if head.isdigit() and rest:
                rows.setdefault(int(head), {})[rest] = value
    return rows
