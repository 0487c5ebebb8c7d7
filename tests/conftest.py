import os

import pytest
from hypothesis import settings

from tests.base import actors_create

# In CI the property-based tests and the API fuzzer draw the same examples every run, so
# a verdict on main never depends on luck; locally (CI unset) each run explores new ones.
settings.register_profile("ci", derandomize=True, database=None)
if os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.fixture
def actors(db):
    return actors_create()
