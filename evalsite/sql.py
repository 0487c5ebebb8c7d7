"""Rows of raw SQL read by column name.

A raw query's rows come back from the driver as tuples; reading them by position
(``row[3]``) breaks silently when a column is added to the ``SELECT``. ``rows_named``
and ``row_named`` give each row as a named tuple whose fields are the query's column
names (``cursor.description``; give computed columns an ``AS`` name). The row type is
built once per column list, and a named tuple costs about what the tuple did, so the
scoring hot paths read their rows this way too.
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


def rows_named(cursor):
    """All remaining rows of ``cursor``, each a named tuple of its columns."""
    make = row_type(cursor)._make
    return list(map(make, cursor.fetchall()))


def row_named(cursor):
    """The next row of ``cursor`` as a named tuple of its columns, or None when there is none."""
    row = cursor.fetchone()
    return None if row is None else row_type(cursor)._make(row)
