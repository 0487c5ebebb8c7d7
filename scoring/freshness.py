"""Which stored scores still describe their run.

A run's ``revision`` is bumped by ingestion when its content changes after it was
stored (a late OpenTelemetry span); a score keeps the ``run_revision`` it was computed
on. A score is *fresh* while the two agree and *stale* once the run moved on: reads
leave stale scores out, and the next pass replaces them (``scoring.pipeline.writer``).
Only runs whose revision is above 1 can have stale scores, so the check looks only at
those (a partial index keeps them), whatever the size of the score table.
"""

from django.db import connection
from django.db.models import Exists, OuterRef, Q

from datasets.models import Trace
from scoring.models import ScoreSource


def _moved_on():
    return Trace.objects.filter(Q(pk=OuterRef("trace_id")), Q(revision__gt=1), Q(revision__gt=OuterRef("run_revision")))


def fresh_sql(score):
    """The same rule as ``scores_fresh`` as a SQL condition on the score table's alias ``score``."""
    trace = connection.ops.quote_name(Trace._meta.db_table)
    return (
        f"NOT EXISTS (SELECT 1 FROM {trace} _t WHERE _t.id = {score}.trace_id AND _t.revision > 1 "
        f"AND _t.revision > {score}.run_revision)"
    )


def scores_fresh(scores):
    """``scores`` (a ``Score`` queryset) without the stale ones."""
    return scores.filter(~Exists(_moved_on()))


def scores_standing(scores):
    """``scores`` without the stale check scores: an end user's feedback stands as given, stale or
    not, since it judged what the user saw and no pass replaces it (monitors, harvest)."""
    return scores.filter(Q(source=ScoreSource.FEEDBACK) | ~Exists(_moved_on()))


def score_is_stale(score, run):
    """Whether ``score`` was computed on an older revision of ``run``."""
    return score.run_revision < run.revision
