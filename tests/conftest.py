import pytest

from tests.base import actors_create


@pytest.fixture
def actors(db):
    return actors_create()
