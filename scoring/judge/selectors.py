"""Reads of a project's judge: the stored row (for the pages), and the ``Judge`` a pass calls.

- ``judge_config_get(project)``: the stored row, or None.
- ``judge_get(project)``: a ``Judge`` ready for ``judge_score`` / ``judge_many``, or
  None when the judge is off (no row, blank endpoint or model). It carries the server's
  ``EVALSITE_OUTBOUND_ALLOW_PRIVATE``, which every call's address is checked against.

What the criteria mean for scoring requests (valid ids, caps, the unknown-scorer
message) is ``scoring.selection.catalog``.
"""

from django.conf import settings

from checks.judge.spec import judge_from
from scoring.models import JudgeConfig


def judge_config_get(project):
    return JudgeConfig.objects.filter(project=project).first()


def judge_get(project):
    config = judge_config_get(project)
    if config is None or not config.is_configured:
        return None
    return judge_from(config, allow_private=settings.EVALSITE_OUTBOUND_ALLOW_PRIVATE)
