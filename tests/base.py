"""Named actors shared by the tests.

acme is the project under test: alice administers it, bob reviews, victor only views;
``api()`` holds acme's admin key, ``ci_api()`` a key of the scopes a CI job holds.
umbrella is another project: charlie administers it and is an outsider to acme. Every
endpoint has a test where charlie's key asks for acme's data and gets a 404.
"""

from dataclasses import dataclass
from functools import cache

from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password
from rest_framework.test import APIClient

from evalsite.models import Project, Role
from evalsite.projects import api_key_create, membership_set, project_create
from evalsite.scopes import ADMIN, DEFAULT_SCOPES

PASSWORD = "correct horse battery staple"


@dataclass
class Actors:
    acme: Project
    umbrella: Project
    alice: object
    bob: object
    victor: object
    charlie: object
    acme_key: str
    umbrella_key: str

    def api(self, key=None):
        """An API client holding ``key`` (acme's by default); ``key=""`` sends none."""
        client = APIClient()
        key = self.acme_key if key is None else key
        if key:
            client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
        return client

    def outsider_api(self):
        return self.api(self.umbrella_key)

    def ci_api(self, scopes=DEFAULT_SCOPES):
        """An API client holding a new acme key of ``scopes`` (what a CI job holds by default)."""
        _, key = api_key_create(project=self.acme, name="ci " + ",".join(scopes), scopes=scopes)
        return self.api(key)


@cache
def _password_hash():
    # A real hash of PASSWORD (servers started by the tests verify it), computed once:
    # the hasher is slow on purpose, and every test creates four users.
    return make_password(PASSWORD)


def user_create(username, **extra):
    user = get_user_model()(username=username, password=_password_hash(), **extra)
    user.save()
    return user


def actors_create():
    acme = project_create(slug="acme", name="Acme")
    umbrella = project_create(slug="umbrella", name="Umbrella")
    alice, bob, victor, charlie = (user_create(n) for n in ("alice", "bob", "victor", "charlie"))
    membership_set(user=alice, project=acme, role=Role.ADMIN)
    membership_set(user=bob, project=acme, role=Role.REVIEWER)
    membership_set(user=victor, project=acme, role=Role.VIEWER)
    membership_set(user=charlie, project=umbrella, role=Role.ADMIN)
    _, acme_key = api_key_create(project=acme, name="ci", scopes=[ADMIN])
    _, umbrella_key = api_key_create(project=umbrella, name="ci", scopes=[ADMIN])
    return Actors(acme, umbrella, alice, bob, victor, charlie, acme_key, umbrella_key)
