"""What the judge code needs to know about a project's judge: a plain, immutable value.

``Judge`` is built from the ``evalsite.models.JudgeConfig`` row (``judge_from``), so the
judge client and the thread pool never touch the ORM. ``judge_from`` also accepts a
``Judge`` or any object with the same attributes.

The api key is kept out of ``repr``: a ``Judge`` printed in a traceback or a log line
does not carry it.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType

DEFAULT_TIMEOUT_SECONDS = 30
TIMEOUT_SECONDS_RANGE = (1, 300)
DEFAULT_MAX_CONCURRENCY = 4
MAX_CONCURRENCY_RANGE = (1, 32)
# A judge score passes when the model's score is at least this (the score itself is kept).
PASS_THRESHOLD = 0.5


@dataclass(frozen=True)
class Judge:
    endpoint: str
    model: str
    api_key: str = field(default="", repr=False)
    timeout_seconds: int = DEFAULT_TIMEOUT_SECONDS
    criteria: Mapping[str, str] = field(default_factory=dict)
    max_concurrency: int = DEFAULT_MAX_CONCURRENCY
    # Whether loopback and private addresses may be called (``checks.outbound``): the
    # server's setting, never the project's; off unless the caller says so.
    allow_private: bool = False

    def __post_init__(self):
        # Shared read-only between the pool's threads.
        object.__setattr__(self, "criteria", MappingProxyType(dict(self.criteria or {})))

    @property
    def is_configured(self):
        """Off until configured: a blank endpoint or model means no judge."""
        return bool(self.endpoint.strip() and self.model.strip())

    @property
    def url(self):
        """Where every call goes: ``{endpoint}/chat/completions``."""
        return self.endpoint.strip().rstrip("/") + "/chat/completions"


def judge_from(config, *, allow_private=None):
    """A ``Judge`` from a ``Judge``, a ``JudgeConfig`` row or anything with the same attributes.

    ``allow_private`` (when given) sets whether loopback and private addresses may be
    called; otherwise a ``Judge`` keeps its own and anything else gets ``False``.
    """
    if isinstance(config, Judge):
        return config if allow_private is None else replace(config, allow_private=allow_private)
    return Judge(
        endpoint=config.endpoint or "",
        model=config.model or "",
        api_key=config.api_key or "",
        timeout_seconds=int(config.timeout_seconds),
        criteria=dict(config.criteria or {}),
        max_concurrency=int(getattr(config, "max_concurrency", DEFAULT_MAX_CONCURRENCY)),
        allow_private=bool(allow_private),
    )


def judge_scorer_version(config):
    """The ``scorer_version`` of a judge score: the model's name.

    Scores of two judges are not comparable, and this field is what says so.
    """
    return judge_from(config).model


def judge_score_config(config, criterion_id):
    """The config a judge score is stored with: the question asked.

    Hashed (``checks.scorers.config_hash``) into the score's uniqueness key, so a
    criterion whose question was reworded scores a run anew instead of colliding with
    the score the old question gave.
    """
    return {"question": judge_from(config).criteria.get(criterion_id, "")}
