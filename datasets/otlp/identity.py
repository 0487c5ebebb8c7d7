"""A run's session, user and conversation, from the attributes its spans carry.

| run field | attributes (first found) |
|---|---|
| ``session_id`` | ``session.id`` (OpenInference), ``langfuse.session.id``, ``ai.telemetry.metadata.sessionId`` (AI SDK) |
| ``user_id`` | ``user.id`` (OpenInference), ``enduser.id``, ``langfuse.user.id``, ``ai.telemetry.metadata.userId`` |
| ``conversation_id`` | ``gen_ai.conversation.id`` (GenAI conventions) |

Read from the root span, then its resource, then the earliest span that has it (an
instrumentation may set it only on the model calls). Strings and integers are taken,
as text of at most 200 characters; other values are ignored.
"""

from datasets.models import Span

MAX_ID = 200
FIELDS = {
    "session_id": ("session.id", "langfuse.session.id", "ai.telemetry.metadata.sessionId"),
    "user_id": ("user.id", "enduser.id", "langfuse.user.id", "ai.telemetry.metadata.userId"),
    "conversation_id": ("gen_ai.conversation.id",),
}
KEYS = [key for keys in FIELDS.values() for key in keys]


def identity_of(attributes):
    """``{field: value}`` for the identity fields these span attributes (or their resource) give."""
    found = {}
    resource = attributes.get("otel.resource") if isinstance(attributes.get("otel.resource"), dict) else {}
    for field, keys in FIELDS.items():
        for source in (attributes, resource):
            value = next((v for v in (_value(source.get(k)) for k in keys) if v is not None), None)
            if value is not None:
                found[field] = value
                break
    return found


def runs_identity(roots):
    """``{trace_pk: {session_id, user_id, conversation_id}}`` for ``{trace_pk: root span}``."""
    identity = {pk: identity_of(root.attributes) for pk, root in roots.items()}
    missing = [pk for pk, found in identity.items() if len(found) < len(FIELDS)]
    if missing:
        rows = (
            Span.objects.filter(trace_id__in=missing, attributes__has_any_keys=KEYS)
            .order_by("started_at", "span_id")
            .values_list("trace_id", "attributes")
            .iterator(chunk_size=1000)
        )
        for trace_pk, attributes in rows:
            for field, value in identity_of(attributes).items():
                identity[trace_pk].setdefault(field, value)
    return {pk: {field: found.get(field) for field in FIELDS} for pk, found in identity.items()}


def _value(value):
    if isinstance(value, bool) or not isinstance(value, str | int):
        return None
    text = str(value).strip()
    return text[:MAX_ID] if text else None
