"""The one module that knows which database is in use; every other module asks it.

PostgreSQL and SQLite differ in a handful of places the code cares about: ``COPY`` and
advisory locks exist only on PostgreSQL, a JSON column is read as text with a cast
there, text sorts by the database's collation unless told ``COLLATE "C"``, and only
PostgreSQL keeps score summaries (its triggers maintain them). Callers ask these
questions instead of comparing ``connection.vendor`` themselves, so a third database
would be taught here, in one place (the house rule in ``tests/test_architecture.py``).
Migrations are frozen history and keep their own checks.
"""

from django.db import connection


def vendor_name():
    """The database in use, as Django names it (``"postgresql"``, ``"sqlite"``): for the health check."""
    return connection.vendor


def is_postgresql():
    """Whether the database is PostgreSQL (``COPY``, advisory locks, summaries, snapshots)."""
    return connection.vendor == "postgresql"


def text_cast(column):
    """``column`` read as text, for a JSON column decoded in Python (SQLite stores it as text already)."""
    return f"{column}::text" if is_postgresql() else column


def byte_order_collation():
    """The ``COLLATE`` clause that sorts text by code point, as Python sorts it (SQLite's default)."""
    return ' COLLATE "C"' if is_postgresql() else ""
