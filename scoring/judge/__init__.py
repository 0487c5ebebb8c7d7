"""The LLM judge's Django half: a project's stored configuration and how passes use it.

- ``services``: ``judge_configure``, the one writer of a project's ``JudgeConfig``.
- ``selectors``: the project's judge, its criteria, the unknown-scorer message.
- ``criteria``: the configured criteria as scorers of a pass, their calls made concurrently.
- ``planning``: the caps with this server's settings (how many runs a request may judge).
- ``forms`` and ``admin``: the configuration in the pages and the Django admin.

The pure half (spec, prompt, client, replies, limits) is ``checks.judge``.
"""
