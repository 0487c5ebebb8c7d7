"""A run's tags and metadata from its root span: OpenInference's run-level attributes.

``openinference.instrumentation.using_attributes(tags=..., metadata=...)`` puts
``tag.tags`` (a list of strings) and ``metadata`` (a JSON object as text) on every span
made inside it. The run takes them from its root span; they also stay in the span's
attributes as sent. Pure: no Django, no database.
"""

from datasets.otlp.messages import json_lenient
from datasets.run_schema import RUN_SCHEMA

TAGS = "tag.tags"
METADATA = "metadata"
RESOURCE = "otel.resource"
MAX_TAGS = RUN_SCHEMA["properties"]["tags"]["maxItems"]
MAX_TAG_LENGTH = RUN_SCHEMA["properties"]["tags"]["items"]["maxLength"]


def run_tags(attrs):
    """The tags of ``tag.tags`` (a list, or its JSON): blank and repeated ones dropped.

    Tags over the run payload's limits are cut (100 tags of 100 characters), since an
    exporter cannot be asked to fix them.
    """
    value = attrs.get(TAGS)
    if isinstance(value, str):
        value = json_lenient(value)
    if not isinstance(value, list):
        return []
    tags = (tag.strip()[:MAX_TAG_LENGTH] for tag in value if isinstance(tag, str))
    return list(dict.fromkeys(tag for tag in tags if tag))[:MAX_TAGS]


def run_metadata(attrs):
    """The span's resource (``service.name``...), then its ``metadata`` JSON object over it.

    The metadata a user sets wins over a resource attribute of the same name; metadata
    that is not a JSON object stays on the span only.
    """
    metadata = dict(attrs.get(RESOURCE) or {})
    value = attrs.get(METADATA)
    if isinstance(value, str):
        value = json_lenient(value)
    if isinstance(value, dict):
        metadata.update(value)
    return metadata
