"""OpenTelemetry ingestion: ``POST /v1/traces`` (OTLP/HTTP) turns exported spans into runs.

- ``decoding``: the request body (protobuf or JSON, gzip/deflate or not) into plain spans
  (``records``).
- ``messages``: chat messages in their several conventional shapes, into one shape.
- ``mapping``: one OTel span into evalsite's span fields (pure: no Django, no database).
- ``ingestion``: the service that merges spans into runs in one transaction.
- ``runs``: a run's name, times, status, answer and cost recomputed from its stored spans.
- ``linking``: ``evalsite.experiment`` / ``evalsite.case`` attributes into the run's links.
- ``protocol``: OTLP responses and errors in the request's own content type.
- ``overload``: the per-process bound on concurrent exports (503 when full).
- ``views``: the endpoint; ``openapi`` describes it; ``errors``: its own domain errors (415, 503).

The rules are documented for users in ``docs/otel.md``.
"""
