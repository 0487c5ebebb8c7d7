"""The top layer: the HTTP doors (API, OTLP, pages) and the commands that compose the apps.

The only place that combines ``datasets``, ``scoring`` and ``experiments``; nothing below
imports it (docs/architecture.md). Each door parses its input, calls one service or
selector of an app below, and shapes the answer.
"""
