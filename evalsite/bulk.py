"""Fast bulk writes: PostgreSQL ``COPY``, or ``executemany`` on other databases.

Django's ``bulk_create`` builds one large parameterised INSERT per batch and is
several times slower than ``COPY`` for tens of thousands of rows. This module is the
one place that knows which database is in use; callers pass rows of Python values
already in the column's database form (see ``datetime_adapter`` and ``db_json``).

``ids_allocate`` hands out primary keys before the rows are written, so children
(spans of a run) can be written in the same pass as their parents.
"""

import orjson
from django.db import connection


def is_postgresql():
    return connection.vendor == "postgresql"


def rows_insert(table, columns, rows):
    """Insert ``rows`` (sequences in ``columns`` order) into ``table``. Must run in a transaction."""
    if not rows:
        return
    column_list = ", ".join(connection.ops.quote_name(c) for c in columns)
    quoted_table = connection.ops.quote_name(table)
    with connection.cursor() as cursor:
        if is_postgresql():
            with cursor.cursor.copy(f"COPY {quoted_table} ({column_list}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
        else:
            placeholders = ", ".join(["%s"] * len(columns))
            cursor.executemany(f"INSERT INTO {quoted_table} ({column_list}) VALUES ({placeholders})", rows)


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
                "SELECT nextval(pg_get_serial_sequence(%s, %s)) FROM generate_series(1, %s)",
                [table, pk, count],
            )
            return [row[0] for row in cursor.fetchall()]
        cursor.execute(
            f"SELECT COALESCE(MAX({connection.ops.quote_name(pk)}), 0) FROM {connection.ops.quote_name(table)}"
        )
        start = cursor.fetchone()[0] + 1
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
