"""What storing a pass's scores costs PostgreSQL, by the shape of the table they go into.

Reads the scores the reference pass left in the reference database (run
``bench/reference.py --only pass`` first) and ``COPY``s them, committed, into a new
table of each shape below, in interleaved rounds:

- as stored: ``scoring_score``'s columns, constraints, indexes and insert trigger;
- the same columns with no index and no trigger, then with each index added in turn;
- reason and detail only on failing scores (empty on passing ones), as stored otherwise;
- narrow: integer-keyed rows (run, scorer, config, value, passed, revision) with a
  primary key on (run, scorer, config), the shape the whole-job limit writes.

    .venv/bin/python bench/score_rows.py [--rounds 3]

``BENCH_PG_URL`` and ``BENCH_REFERENCE_DB`` as for ``bench/reference.py``. The tables it
makes are dropped at the end; the scores are left as they were.
"""

import argparse
import os
import statistics
import time

import psycopg

PG_SERVER = os.environ.get("BENCH_PG_URL", "postgresql://postgres@127.0.0.1:5432")
PG_DB = os.environ.get("BENCH_REFERENCE_DB", "evalsite_bench_reference")
WIDE = "CREATE TABLE bench_rows (LIKE scoring_score INCLUDING DEFAULTS INCLUDING CONSTRAINTS)"
PKEY = "ALTER TABLE bench_rows ADD PRIMARY KEY (id)"
UNIQUE = "ALTER TABLE bench_rows ADD UNIQUE (trace_id, scorer, scorer_version, config_hash)"
BY_EXPERIMENT = "CREATE INDEX ON bench_rows (experiment_id, scorer)"
TRIGGER = (
    "CREATE TRIGGER bench_rows_inserted AFTER INSERT ON bench_rows REFERENCING NEW TABLE AS new_scores "
    "FOR EACH STATEMENT EXECUTE FUNCTION scoring_scores_changed()"
)
NARROW = (
    "CREATE TABLE bench_rows (trace_id bigint NOT NULL, scorer_id smallint NOT NULL, config_id integer NOT NULL, "
    "value real NOT NULL, passed boolean NOT NULL, run_revision integer NOT NULL, "
    "PRIMARY KEY (trace_id, scorer_id, config_id))"
)
# (name, source query, table definition)
SHAPES = [
    ("as stored (3 indexes, trigger)", "wide", [WIDE, PKEY, UNIQUE, BY_EXPERIMENT, TRIGGER]),
    ("no index, no trigger", "wide", [WIDE]),
    ("primary key", "wide", [WIDE, PKEY]),
    ("primary key, unique key", "wide", [WIDE, PKEY, UNIQUE]),
    ("3 indexes, no trigger", "wide", [WIDE, PKEY, UNIQUE, BY_EXPERIMENT]),
    (
        "reason and detail on failing scores only, as stored",
        "failing_detail",
        [WIDE, PKEY, UNIQUE, BY_EXPERIMENT, TRIGGER],
    ),
    ("narrow, integer-keyed, primary key", "narrow", [NARROW]),
]
SOURCES = {
    "wide": "SELECT * FROM scoring_score",
    "narrow": (
        "SELECT trace_id, dense_rank() OVER (ORDER BY scorer, scorer_version), "
        "dense_rank() OVER (ORDER BY config_hash), value, passed, run_revision FROM scoring_score"
    ),
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with psycopg.connect(f"{PG_SERVER}/{PG_DB}", autocommit=True) as conn:
        # The columns in the table's order, reason and detail emptied on passing scores.
        failing_only = ", ".join(_failing_only(column) for column in _columns(conn))
        sources = {**SOURCES, "failing_detail": f"SELECT {failing_only} FROM scoring_score"}
        data = {name: _copy_out(conn, sql) for name, sql in sources.items()}
        rows = conn.execute("SELECT count(*) FROM scoring_score").fetchone()[0]
        if not rows:
            raise SystemExit("no score in the reference database: run bench/reference.py --only pass first")
        seconds = {name: [] for name, _, _ in SHAPES}
        sizes = {}
        for _ in range(args.rounds):
            for name, source, ddl in SHAPES:
                seconds[name].append(_copy_in(conn, ddl, data[source]))
                sizes[name] = conn.execute("SELECT pg_total_relation_size('bench_rows')").fetchone()[0]
        conn.execute("DROP TABLE IF EXISTS bench_rows")
    base = statistics.median(seconds[SHAPES[0][0]])
    print(f"{rows:,} score rows, COPY and commit, median of {args.rounds} interleaved rounds\n")
    print("| table | seconds | per row | on disk | against as stored |")
    print("|---|---:|---:|---:|---:|")
    for name, _, _ in SHAPES:
        median = statistics.median(seconds[name])
        print(
            f"| {name} | {median:.3f} ({', '.join(f'{s:.2f}' for s in seconds[name])}) | "
            f"{median / rows * 1e6:.1f} µs | {sizes[name] / rows:.0f} B | {median / base:.2f} |"
        )


def _columns(conn):
    return [
        row[0]
        for row in conn.execute(
            "SELECT attname FROM pg_attribute WHERE attrelid = 'scoring_score'::regclass AND attnum > 0 "
            "AND NOT attisdropped ORDER BY attnum"
        )
    ]


def _failing_only(column):
    if column == "reason":
        return "CASE WHEN passed THEN '' ELSE reason END"
    if column == "detail":
        return "CASE WHEN passed THEN '{}'::jsonb ELSE detail END"
    return f'"{column}"'


def _copy_out(conn, sql):
    data = bytearray()
    with conn.cursor().copy(f"COPY ({sql}) TO STDOUT") as copy:
        for chunk in copy:
            data += chunk
    return bytes(data)


def _copy_in(conn, ddl, data):
    conn.execute("DROP TABLE IF EXISTS bench_rows")
    for statement in ddl:
        conn.execute(statement)
    conn.execute("CHECKPOINT")
    started = time.perf_counter()
    with conn.transaction(), conn.cursor().copy("COPY bench_rows FROM STDIN") as copy:
        for start in range(0, len(data), 1 << 20):
            copy.write(data[start : start + (1 << 20)])
    return time.perf_counter() - started


if __name__ == "__main__":
    main()
