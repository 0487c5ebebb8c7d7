"""Team changes made at the same moment, on PostgreSQL (SQLite serialises every writer).

Two admins changing each other's role at once both succeed (they used to deadlock, and
the loser was answered 503 "database unavailable").
"""

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection, transaction

from evalsite.models import Membership, Project, Role
from evalsite.projects import membership_set
from evalsite.team import member_role_change
from tests.base import actors_create

pytestmark = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="the race needs row locks and concurrent writers: PostgreSQL"
)


def _in_thread(work):
    """Run ``work()`` on its own connection; return its result or the exception it raised."""
    try:
        return work()
    except Exception as exc:
        return exc
    finally:
        connection.close()


def test_two_admins_changing_each_others_role_at_once_both_succeed(transactional_db):
    actors = actors_create()
    acme, alice, bob = actors.acme, actors.alice, actors.bob
    membership_set(user=bob, project=acme, role=Role.ADMIN)
    membership_set(user=actors.victor, project=acme, role=Role.ADMIN)  # a third admin stays whatever happens
    alice_id, bob_id = (Membership.objects.get(project=acme, user=u).pk for u in (alice, bob))

    # A third transaction holds the project row, so both changes take whatever they lock
    # before it and then wait for it together: the moment a lock-order cycle would close.
    held, release = threading.Event(), threading.Event()

    def hold():
        with transaction.atomic():
            Project.objects.select_for_update().get(pk=acme.pk)
            held.set()
            release.wait(10)

    def change(actor, membership_id):
        return lambda: member_role_change(project=acme, actor=actor, membership_id=membership_id, role=Role.REVIEWER)

    with ThreadPoolExecutor(max_workers=3) as pool:
        holder = pool.submit(_in_thread, hold)
        assert held.wait(10)
        outcomes = [pool.submit(_in_thread, change(alice, bob_id)), pool.submit(_in_thread, change(bob, alice_id))]
        time.sleep(0.5)  # both changes are now waiting on the project row
        release.set()
        results = [f.result(timeout=30) for f in outcomes]
        assert holder.result(timeout=30) is None
    assert [r for r in results if isinstance(r, Exception)] == []
    roles = dict(Membership.objects.filter(project=acme).values_list("user__username", "role"))
    assert roles["alice"] == roles["bob"] == Role.REVIEWER and roles["victor"] == Role.ADMIN
