"""A finished gate run's case results in pages, by a cursor naming the last case given.

Two orders: ``failures`` (failing cases first, the unmeasured ones first among them, then
the passing ones; each group in report order) and ``position`` (the report's order).
The cursor is the sort key of the last row a page gave (keyset), never an offset, so
the last page of 10,000 cases costs what the first does. A finished gate run's rows
never change: a cursor gives the same page whenever it is read.

The gate's answer carries the first page of its gating cases and of its quarantined
ones (``answer_cases``): the failures are chosen first, then listed in report order, so a
gate that fits in one page answers every case in report order, as it always did; the
cursor continues the failures order after the last one chosen.

A cursor is text the client can change: one this module did not write, or one of the
other order, is ``Invalid`` (400) naming ``cursor``.
"""

import base64
import binascii

from django.conf import settings
from django.db.models import F
from django.db.models.fields.tuple_lookups import Tuple, TupleGreaterThan

from evalsite.errors import Invalid
from gating.models import GateCase

ORDERS = {"failures": ("passed", "measured", "position"), "position": ("position",)}
_BOOLEANS = {"passed", "measured"}
_VERSION = "g1"


def page_size_default():
    """Cases in one page, and in the gate's answer (``EVALSITE_GATE_ANSWER_CASES``)."""
    return settings.EVALSITE_GATE_ANSWER_CASES


def row_key(row, order):
    """The sort key of a case row (a GateCase or an evaluation's CaseRow) under ``order``."""
    return tuple(int(getattr(row, name)) for name in ORDERS[order])


def cursor_encode(order, key):
    text = ":".join([_VERSION, order, *(str(value) for value in key)])
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def cursor_decode(cursor, order):
    """The key a cursor of ``order`` names; ``Invalid`` naming ``cursor`` for any other text."""
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode("ascii")
        version, named, *values = text.split(":")
        key = tuple(int(value) for value in values)
    except (ValueError, binascii.Error, UnicodeError):
        raise _bad_cursor("is not a cursor of this list: take it from next") from None
    if version != _VERSION or named not in ORDERS or len(key) != len(ORDERS[named]):
        raise _bad_cursor("is not a cursor of this list: take it from next")
    if named != order:
        raise _bad_cursor(f"is a cursor of order={named}, not order={order}")
    if not all(0 <= value <= 2**31 for value in key):
        raise _bad_cursor("is not a cursor of this list: take it from next")
    return key


def _bad_cursor(message):
    return Invalid(f"cursor {message}.", errors=[{"field": "cursor", "message": message}])


def _after(order, key):
    """Rows whose key under ``order`` comes after ``key``: one row-value comparison, which
    PostgreSQL reads as a range of ``gatecase_pages`` (an OR of its parts would scan the
    gate run's every row for each page)."""
    names = ORDERS[order]
    values = [bool(v) if name in _BOOLEANS else v for name, v in zip(names, key, strict=True)]
    return TupleGreaterThan(Tuple(*(F(name) for name in names)), values)


def case_page(*, gate_run, order="failures", passed=None, quarantined=None, cursor=None, size=None):
    """``(results, next cursor or None)``: up to ``size`` case results after ``cursor``, in ``order``.

    One query (``size + 1`` rows read, to know whether more follow).
    """
    size = size or page_size_default()
    rows = GateCase.objects.filter(gate_run=gate_run)
    if passed is not None:
        rows = rows.filter(passed=passed)
    if quarantined is not None:
        rows = rows.filter(quarantined=quarantined)
    if cursor:
        rows = rows.filter(_after(order, cursor_decode(cursor, order)))
    page = list(rows.order_by(*ORDERS[order]).only(*ORDERS[order], "result")[: size + 1])
    following = cursor_encode(order, row_key(page[size - 1], order)) if len(page) > size else None
    return [row.result for row in page[:size]], following


def answer_cases(gate_run, rows=None, size=None):
    """The cases the gate's answer carries: ``{cases, cases_next, quarantined, quarantined_next}``.

    ``rows``: the evaluation's rows when it just wrote them (not read back), else they are
    read, one page of each kind. Each ``*_next`` is a cursor of ``failures`` order (with
    ``quarantined`` false or true) or None when the answer holds them all.
    """
    size = size or page_size_default()
    found = {}
    for kind, quarantined in (("cases", False), ("quarantined", True)):
        if rows is None:
            chosen = list(
                GateCase.objects.filter(gate_run=gate_run, quarantined=quarantined)
                .order_by(*ORDERS["failures"])
                .only(*ORDERS["failures"], "result")[: size + 1]
            )
        else:
            chosen = sorted((r for r in rows if r.quarantined == quarantined), key=lambda r: row_key(r, "failures"))
            chosen = chosen[: size + 1]
        following = cursor_encode("failures", row_key(chosen[size - 1], "failures")) if len(chosen) > size else None
        found[kind] = [row.result for row in sorted(chosen[:size], key=lambda r: r.position)]
        found[f"{kind}_next"] = following
    return found
