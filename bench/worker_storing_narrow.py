"""A Celery worker whose scoring passes store narrow, integer-keyed score rows: what that shape would reach.

``bench/reference.py`` runs the reference pass on it beside the pass as deployed and
the pass storing no row. Everything is as on a real worker (planned, claimed, loaded,
scored, the runs locked, what is stored read back, the configs stored, abstentions
recorded, the chunk's counters kept, committed batch by batch), except the scores: each
is a row of ``bench_narrow_score`` (run, scorer id, config id, value, passed,
revision; primary key on the first three), without reason, detail or any text. The
scorer and config ids are this process's numbering of the scorer names and config
hashes, which a store of that shape would keep in tables of their own. Nothing reads
these rows: the figure measures what a pass would cost if readers made reason and
detail again, or found them elsewhere. With ``BENCH_NARROW_NO_CONFIGS=1`` in its
environment it stores no config either: what a pass would cost if the per-case configs
(about 30,000 rows per 10,000 runs) were stored once per distinct config instead.

    .venv/bin/python -m bench.worker_storing_narrow -A evalsite worker ...   (celery's arguments)
"""

import os
import sys

from celery.__main__ import main
from celery.signals import worker_init

TABLE = "bench_narrow_score"
TABLE_DDL = (
    f"CREATE TABLE IF NOT EXISTS {TABLE} (trace_id bigint NOT NULL, scorer_id smallint NOT NULL, "
    "config_id integer NOT NULL, value real NOT NULL, passed boolean NOT NULL, run_revision integer NOT NULL, "
    "PRIMARY KEY (trace_id, scorer_id, config_id))"
)


@worker_init.connect
def _store_narrow(**kwargs):
    import django

    django.setup()
    from django.db import connection

    from scoring.passes import services
    from scoring.pipeline import writer

    ids = {}

    def number(key):
        return ids.setdefault(key, len(ids) + 1)

    def rows_write(project, pass_id, report, stale, stored, now, retried, configs_stored):
        rows = [
            (o.run.pk, number(("scorer", o.scorer_id, o.version)), number(("config", o.config_hash)), o.result.value,
             o.result.passed, o.run.revision)
            for o in report.written
        ]  # fmt: skip
        with connection.cursor() as cursor, cursor.cursor.copy(f"COPY {TABLE} FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)
        report.written, written = [], report.written
        original(project, pass_id, report, stale, stored, now, retried, configs_stored)
        report.written = written

    original = writer._rows_write
    writer._rows_write = rows_write
    if os.environ.get("BENCH_NARROW_NO_CONFIGS") == "1":
        services.outcome_configs_store = lambda *args, **kwargs: None


if __name__ == "__main__":
    sys.exit(main())
