"""Team changes made at the same moment, on PostgreSQL (SQLite serialises every writer).

Two admins changing each other's role at once both succeed (they used to deadlock, and
the loser was answered 503 "database unavailable"). Six people signing up on one
invitation link at once make one account; the others are told the link was used.
"""

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.test import Client

from evalsite.models import Membership, Project, Role
from evalsite.projects import membership_set
from evalsite.team import invitation_create, member_role_change
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


def test_six_signups_on_one_invitation_link_at_once_make_one_account(transactional_db):
    actors = actors_create()
    _, token = invitation_create(project=actors.acme, actor=actors.alice, email="erin@example.com", role=Role.REVIEWER)
    users_before = get_user_model().objects.count()
    barrier = threading.Barrier(6)

    def signup(n):
        def work():
            form = {"username": f"erin{n}", "password1": "a long pass phrase 42", "password2": "a long pass phrase 42"}
            barrier.wait()
            return Client().post(f"/invite/{token}/", form)

        return work

    with ThreadPoolExecutor(max_workers=6) as pool:
        responses = list(pool.map(_in_thread, [signup(n) for n in range(6)]))
    statuses = sorted(getattr(r, "status_code", r) for r in responses)
    assert statuses == [302, 404, 404, 404, 404, 404]
    refused = [r for r in responses if r.status_code == 404]
    assert all(b"was used, withdrawn or has expired" in r.content for r in refused)
    assert get_user_model().objects.count() == users_before + 1
    joined = Membership.objects.get(project=actors.acme, role=Role.REVIEWER, user__username__startswith="erin")
    assert joined.user.email == "erin@example.com"
