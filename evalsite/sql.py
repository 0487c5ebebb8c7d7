"""Rows of raw SQL read by column name.

A raw query's rows come back from the driver as tuples; reading them by position
(``row[3]``) breaks silently when a column is added to the ``SELECT``. ``rows_named``
and ``row_named`` give each row as a named tuple whose fields are the query's column
names (``cursor.description``; give computed columns an ``AS`` name). The row type is
built once per column list. The hot loops (``columns_of``) read plain rows through the positions of their columns, by name.
"""

from collections import namedtuple
from functools import lru_cache


@lru_cache(maxsize=512)
def _row_type(columns):
    # rename: a column without a usable name (a duplicate, ``?column?``) gets a positional
    # one (``_2``) instead of failing the query; give it an ``AS`` name to read it.
    return namedtuple("Row", columns, rename=True)


def row_type(cursor):
    """The named-tuple type of ``cursor``'s rows (after ``execute``)."""
    return _row_type(tuple(column[0] for column in cursor.description))


def columns_of(cursor):
    """Where each of ``cursor``'s columns is, by name (``cols.trace_id`` is 0, ...).

    For the loops over hundreds of thousands of rows (a pass's spans and scores): the
    rows stay the driver's tuples, read as ``row[cols.name]`` (or through a local taken
    from it), which costs no more than a literal position; a named tuple per row costs
    about a microsecond each.
    """
    names = tuple(column[0] for column in cursor.description)
    return _row_type(names)._make(range(len(names)))


def rows_with_columns(cursor):
    """``(rows, columns)``: the remaining rows as the driver's tuples and ``columns_of`` them (None without a row)."""
    rows = cursor.fetchall()
    return rows, (columns_of(cursor) if rows else None)


def rows_named(cursor):
    """All remaining rows of ``cursor``, each a named tuple of its columns."""
    make = row_type(cursor)._make
    return list(map(make, cursor.fetchall()))


def row_named(cursor):
    """The next row of ``cursor`` as a named tuple of its columns, or None when there is none."""
    row = cursor.fetchone()
    return None if row is None else row_type(cursor)._make(row)
