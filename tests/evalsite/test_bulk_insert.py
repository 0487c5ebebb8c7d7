"""``rows_insert_new``: rows that collide with a unique constraint are skipped, never an error,
also when the caller said every row was new (``expect_new``: a straight ``COPY``)."""

import pytest
from django.db import transaction
from django.utils import timezone

from evalsite.bulk import rows_insert_new
from scoring.models import Score
from scoring.pipeline.writer import SCORE_COLUMNS, SCORE_KEY
from tests.factories import trace_create

pytestmark = pytest.mark.django_db


def _row(trace, scorer):
    return (
        trace.project_id, trace.pk, scorer, "1", "h" * 16, 1.0, True, "ok", "{}", "pass",
        trace.experiment_id, trace.case_id, None, trace.revision, timezone.now(),
    )  # fmt: skip


@pytest.mark.parametrize("expect_new", [False, True])
def test_new_rows_are_written_and_a_colliding_one_is_skipped(actors, expect_new):
    trace = trace_create(actors.acme, "run-1")
    with transaction.atomic():
        assert rows_insert_new(Score._meta.db_table, SCORE_COLUMNS, [_row(trace, "a")], unique=SCORE_KEY) == 1
    with transaction.atomic():
        rows = [_row(trace, "a"), _row(trace, "b"), _row(trace, "c")]
        inserted = rows_insert_new(Score._meta.db_table, SCORE_COLUMNS, rows, unique=SCORE_KEY, expect_new=expect_new)
        # The transaction goes on after the collision: the fallback rolled back only its savepoint.
        assert Score.objects.filter(trace=trace).count() == 3
    assert inserted == 2
    assert sorted(Score.objects.filter(trace=trace).values_list("scorer", flat=True)) == ["a", "b", "c"]


def test_expected_new_rows_are_all_written(actors):
    trace = trace_create(actors.acme, "run-1")
    with transaction.atomic():
        rows = [_row(trace, s) for s in ("a", "b")]
        assert rows_insert_new(Score._meta.db_table, SCORE_COLUMNS, rows, unique=SCORE_KEY, expect_new=True) == 2
    assert Score.objects.filter(trace=trace).count() == 2
