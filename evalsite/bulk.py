"""Fast bulk writes: PostgreSQL ``COPY``, or ``executemany`` on other databases.

Django's ``bulk_create`` builds one large parameterised INSERT per batch and is
several times slower than ``COPY`` for tens of thousands of rows. This module is the
one place that writes in bulk; it asks ``evalsite.vendor`` which database is in use. Callers pass rows of Python values
already in the column's database form (see ``datetime_adapter`` and ``db_json``).

``ids_allocate`` hands out primary keys before the rows are written, so children
(spans of a run) can be written in the same pass as their parents.
``rows_insert_new`` writes only the rows that do not collide with a unique constraint
and says how many it wrote, so a retried batch inserts nothing twice.
``rows_select_by_ids`` reads the rows of a batch of ids as one index lookup per id (each
a named tuple of its columns, ``evalsite.sql``);
``rows_lock`` locks a batch of rows for the rest of the transaction.
"""

import hashlib
import json

import orjson
from django.db import IntegrityError, connection, transaction
from django.db.models import TextField
from django.db.models.functions import Cast

from evalsite.sql import row_named, rows_named, rows_with_columns
from evalsite.vendor import is_postgresql


def rows_insert(table, columns, rows):
    """Insert ``rows`` (sequences in ``columns`` order) into ``table``. Must run in a transaction.

    ``rows`` may be an iterator: on PostgreSQL each row is sent as it is made, so the
    database stores the first rows while the caller makes the next ones.
    """
    if isinstance(rows, list | tuple) and not rows:
        return
    column_list = ", ".join(connection.ops.quote_name(c) for c in columns)
    quoted_table = connection.ops.quote_name(table)
    with connection.cursor() as cursor:
        if is_postgresql():
            _copy_rows(cursor, f"COPY {quoted_table} ({column_list}) FROM STDIN", rows)
        else:
            placeholders = ", ".join(["%s"] * len(columns))
            cursor.executemany(f"INSERT INTO {quoted_table} ({column_list}) VALUES ({placeholders})", rows)


def _copy_rows(cursor, sql, rows):
    """``COPY`` rows through the driver's cursor, its errors translated as Django's.

    The driver's ``copy`` bypasses Django's cursor wrapper, so without the translation
    a unique violation would escape as ``psycopg.errors.UniqueViolation`` instead of the
    ``IntegrityError`` callers catch (two clients writing one ``trace_id`` at once).
    """
    with connection.wrap_database_errors, cursor.cursor.copy(sql) as copy:
        for row in rows:
            copy.write_row(row)


def rows_insert_new(table, columns, rows, *, unique, expect_new=False):
    """Insert the ``rows`` whose ``unique`` columns match no stored row of ``table``; return how many.

    ``expect_new=True`` is for a caller that has already left out, under its own locks,
    every row that could conflict: on PostgreSQL the rows are then ``COPY``'d straight
    into the table in a savepoint, with no staging table and no conflict check (about
    half the database's work). Should a row conflict all the same (a writer that
    bypassed those locks), the savepoint is rolled back and the rows take the path below.

    ``unique`` names the columns of a unique constraint of ``table`` (the conflict
    target: the one index checked for a conflict). PostgreSQL: ``COPY`` into a
    temporary staging table, then one ``INSERT ... SELECT ... ON CONFLICT (unique) DO
    NOTHING`` (``COPY`` itself cannot skip conflicts). Other databases: ``executemany``
    of the same ``INSERT``. Must run in a transaction. Two transactions inserting
    overlapping rows in different orders can deadlock on the unique index: callers
    that may overlap serialize themselves first (the scoring writer locks the runs it
    writes for).
    """
    if not rows:
        return 0
    q = connection.ops.quote_name
    column_list = ", ".join(q(c) for c in columns)
    if expect_new and is_postgresql():
        rows = rows if isinstance(rows, list) else list(rows)
        try:
            with transaction.atomic(), connection.cursor() as cursor:
                _copy_rows(cursor, f"COPY {q(table)} ({column_list}) FROM STDIN", rows)
            return len(rows)
        except IntegrityError:
            pass
    conflict = f"ON CONFLICT ({', '.join(q(c) for c in unique)}) DO NOTHING"
    with connection.cursor() as cursor:
        if not is_postgresql():
            placeholders = ", ".join(["%s"] * len(columns))
            cursor.executemany(f"INSERT INTO {q(table)} ({column_list}) VALUES ({placeholders}) {conflict}", rows)
            return cursor.rowcount
        # One staging table per (table, columns) and connection, emptied at every commit.
        staging = q(f"_staging_{table}_{hashlib.sha1(column_list.encode()).hexdigest()[:8]}")
        cursor.execute(
            f"CREATE TEMPORARY TABLE IF NOT EXISTS {staging} ON COMMIT DELETE ROWS AS "
            f"SELECT {column_list} FROM {q(table)} WITH NO DATA"
        )
        _copy_rows(cursor, f"COPY {staging} ({column_list}) FROM STDIN", rows)
        cursor.execute(f"INSERT INTO {q(table)} ({column_list}) SELECT {column_list} FROM {staging} {conflict}")
        inserted = cursor.rowcount
        cursor.execute(f"TRUNCATE {staging}")
        return inserted


def rows_select_by_ids(sql, ids, params=(), *, positions=False):
    """Run ``sql`` for a batch of integer ``ids``; returns the rows (named tuples of the query's columns).

    ``sql`` is a query whose ``WHERE`` names the id column followed by ``{ids}``
    (``... WHERE trace_id {ids} AND x = %s``), before any other placeholder;
    ``params`` are its other parameters. On
    PostgreSQL it runs laterally for each id of ``unnest(ids)``, so the plan is one
    index lookup per id whatever the table's statistics say (a table that a large pass
    is filling has none yet, and the planner would read it whole for every batch).
    Other databases: ``IN (...)``. A query with ``GROUP BY`` the id column works on both.
    ``positions=True`` (hot loops): ``(rows as plain tuples, columns)``, the columns'
    positions by name (``evalsite.sql.columns_of``; None when there is no row).
    """
    if not ids:
        return ([], None) if positions else []
    with connection.cursor() as cursor:
        if is_postgresql():
            # OFFSET 0 keeps the planner from flattening the lateral query into a hash
            # join over the whole table, which is what it does when it has no statistics.
            inner = sql.replace("{ids}", "= _ids.id") + " OFFSET 0"
            cursor.execute(
                f"SELECT _rows.* FROM unnest(%s::bigint[]) AS _ids(id) CROSS JOIN LATERAL ({inner}) AS _rows",
                [list(ids), *params],
            )
        else:
            cursor.execute(sql.replace("{ids}", f"IN ({', '.join(['%s'] * len(ids))})"), [*ids, *params])
        return rows_with_columns(cursor) if positions else rows_named(cursor)


def rows_lock(table, ids, *, columns=()):
    """Lock the rows of ``table`` with these primary keys until the transaction ends.

    Returns the rows found, in id order: named tuples of ``id`` and ``columns``, read as
    they stand once locked (``evalsite.sql``). PostgreSQL: ``SELECT ... FOR NO KEY
    UPDATE`` in primary-key order (so two lockers of overlapping sets cannot deadlock);
    it does not block inserts of rows that refer to them. SQLite: an IMMEDIATE
    transaction already holds the database's write lock, so this only reads the rows.
    Must run in a transaction.
    """
    if not ids:
        return []
    q = connection.ops.quote_name
    selected = ", ".join(q(c) for c in ("id", *columns))
    with connection.cursor() as cursor:
        if is_postgresql():
            # One array parameter: a query of hundreds of placeholders costs the client
            # more to prepare than the server to answer.
            cursor.execute(
                f"SELECT {selected} FROM {q(table)} WHERE id = ANY(%s) ORDER BY id FOR NO KEY UPDATE", [list(ids)]
            )
        else:
            placeholders = ", ".join(["%s"] * len(ids))
            cursor.execute(f"SELECT {selected} FROM {q(table)} WHERE id IN ({placeholders}) ORDER BY id", list(ids))
        return rows_named(cursor)


def ids_allocate(model, count):
    """``count`` fresh primary keys for ``model``. Must run in a transaction.

    PostgreSQL draws them from the table's sequence (safe under any concurrency).
    SQLite has no sequence object, but an IMMEDIATE transaction holds the database's
    write lock from its first statement, so reading the current maximum is safe.
    """
    if count <= 0:
        return []
    table = model._meta.db_table
    pk = model._meta.pk.column
    with connection.cursor() as cursor:
        if is_postgresql():
            cursor.execute(
                "SELECT nextval(pg_get_serial_sequence(%s, %s)) AS id FROM generate_series(1, %s)",
                [table, pk, count],
            )
            return [row.id for row in rows_named(cursor)]
        cursor.execute(
            f"SELECT COALESCE(MAX({connection.ops.quote_name(pk)}), 0) AS top FROM {connection.ops.quote_name(table)}"
        )
        start = row_named(cursor).top + 1
        return list(range(start, start + count))


def datetime_adapter():
    """A function turning an aware datetime (or None) into the column's form.

    Resolve it once per batch: looking ``connection.ops`` up per value goes through
    Django's thread-local connection proxy and costs more than the conversion.
    """
    return connection.ops.adapt_datetimefield_value


def db_json(value):
    """A JSON column value as text (COPY and SQLite alike); ``None`` is SQL NULL."""
    return None if value is None else orjson.dumps(value).decode()


def db_decimal(value):
    return None if value is None else str(value)


def json_text(field):
    """An annotation of the JSON column ``field`` as its text, to decode with ``json_loads``.

    Reading many rows, the JSON field's own decoding (stdlib ``json``) is a visible cost.
    """
    return Cast(field, TextField())


def json_loads(text):
    """A JSON column's text decoded (orjson; stdlib ``json`` for what orjson refuses); None stays None."""
    if text is None:
        return None
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:  # integers beyond 64 bits
        return json.loads(text)
