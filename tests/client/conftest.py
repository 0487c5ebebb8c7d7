"""A live evalsite for the client's end-to-end tests: a gunicorn server and a project key."""

import pytest

import evalgate
from evalsite.projects import api_key_create, project_create
from evalsite.scopes import ADMIN
from examples.reservo import GOLDEN_CASES_PATH
from tests.live import web_server


@pytest.fixture(scope="module")
def live_url(django_db_setup):
    with web_server(workers=2) as url:
        yield url


@pytest.fixture
def server(live_url, transactional_db):
    """The live server's URL and a key of a fresh project (the database is emptied after each test)."""
    project = project_create(slug="client-e2e", name="Client end to end")
    _, key = api_key_create(project=project, name="ci", scopes=[ADMIN])
    return live_url, key


@pytest.fixture
def reservo(server):
    """An evalgate Client on the live server, with Reservo's golden set imported as dataset ``reservo``."""
    url, key = server
    client = evalgate.Client(url, key)
    evalgate.cases_import(client, "reservo", GOLDEN_CASES_PATH.read_bytes())
    return client
