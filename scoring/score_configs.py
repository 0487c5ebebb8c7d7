"""The configs scores were computed with, stored once per project and hash (``ScoreConfig``).

``score_configs_store`` writes the configs a batch of scores names, in the transaction
that writes the scores (those already stored are left as they are: a hash names one
content). ``score_configs_of`` reads them back by hash, and ``scores_with_config``
gives a score queryset its ``config``.
"""

from django.db.models import OuterRef, Subquery

from evalsite.bulk import rows_insert_new
from scoring.models import ScoreConfig

COLUMNS = ("project_id", "config_hash", "config")


def score_configs_store(*, project_id, configs):
    """Store ``configs`` (``{config_hash: config as JSON text}``) for the project; returns how many were new.

    In hash order, so that two writers storing overlapping configs wait for each other
    in the same order and never in a cycle.
    """
    rows = [(project_id, digest, text) for digest, text in sorted(configs.items())]
    return rows_insert_new(ScoreConfig._meta.db_table, COLUMNS, rows, unique=("project_id", "config_hash"))


def score_configs_of(*, project_id, hashes):
    """``{config_hash: config}`` of the project's stored configs among ``hashes``."""
    rows = ScoreConfig.objects.filter(project_id=project_id, config_hash__in=set(hashes))
    return dict(rows.values_list("config_hash", "config"))


def scores_with_config(scores):
    """``scores`` (a ``Score`` queryset), each with ``config``: the config its hash names (None if unknown)."""
    stored = ScoreConfig.objects.filter(project_id=OuterRef("project_id"), config_hash=OuterRef("config_hash"))
    return scores.annotate(config=Subquery(stored.values("config")[:1]))
