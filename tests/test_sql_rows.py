"""House rule: raw SQL rows are read by column name (evalsite/sql.py), never by position."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Every package of the product (not the benchmarks, the client, the examples or the tests).
APPS = sorted(
    p.parent.name for p in ROOT.glob("*/__init__.py") if p.parent.name not in ("bench", "client", "examples", "tests")
)
FETCH = re.compile(r"\.fetch(all|one|many)\(")


def test_no_app_module_fetches_rows_but_through_evalsite_sql():
    offenders = []
    for app in APPS:
        for path in sorted((ROOT / app).rglob("*.py")):
            if path == ROOT / "evalsite" / "sql.py" or "migrations" in path.parts:
                continue
            for number, line in enumerate(path.read_text().splitlines(), 1):
                if FETCH.search(line):
                    offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert offenders == [], "read rows with evalsite.sql.rows_named / row_named:\n" + "\n".join(offenders)


def test_the_rule_looks_at_every_app():
    assert {"evalsite", "datasets", "scoring", "gating", "web"} <= set(APPS)


def test_the_rule_would_see_a_positional_read():
    assert FETCH.search("start = cursor.fetchone()[0] + 1")
    assert FETCH.search("return cursor.fetchall()")
    assert not FETCH.search("return rows_named(cursor)")


def test_rows_come_back_named_by_their_columns(db):
    from django.db import connection

    from evalsite.sql import row_named, rows_named

    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 AS id, 'a' AS name UNION ALL SELECT 2, 'b'")
        assert [(r.id, r.name) for r in rows_named(cursor)] == [(1, "a"), (2, "b")]
        cursor.execute("SELECT 7 AS top")
        assert row_named(cursor).top == 7
        cursor.execute("SELECT 1 AS id WHERE 1 = 0")
        assert row_named(cursor) is None
