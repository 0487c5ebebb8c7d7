"""Pure checks: what a run is measured with and how a verdict follows from the measures.

The bottom layer of the house (docs/architecture.md): nothing here imports Django, DRF,
Celery or any app of the project, so every rule can be read, run and tested alone.

- ``checks.scorers``: the built-in scorers and agent checks, functions of a loaded run.
- ``checks.judge``: the LLM judge's pure half: its spec, prompt, HTTP client, reply
  reading and limits.
- ``checks.verdict``: what passes a case and what blocks a gate.
"""
